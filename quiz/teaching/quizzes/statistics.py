"""Item analysis of a quiz: which questions work, which mislead, which to fix.

Modelled on Moodle's quiz statistics report (docs.moodle.org/dev/
Quiz_statistics_calculations), in plain Python so it can be tested without a
database and run on any list of responses:

- an attempt's total is the sum of fraction * max_points over its slots;
  every attempt given counts, even one with no response on some slot (a
  slot's figures then use the attempts that have it);
- per slot, and per question within a slot (a slot can draw different
  questions): facility, standard deviation, discrimination index and
  discriminative efficiency;
- per option of a choice question: how many chose it, overall and in the
  top and bottom 27% of attempts; per question, the common wrong answers;
- for the quiz: mean and SD of the totals and Cronbach's alpha;
- flags an instructor reads: negative discrimination, too easy, too hard,
  a distractor nobody chose.

A figure that is undefined (one attempt, no variance, no points) is None,
never NaN, and nothing here raises on such data.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields, is_dataclass

# Share of attempts in each of the top and bottom groups (Kelley's 27%).
GROUP_SHARE_PERCENT = 27
# A facility above this: nearly everyone got it, so it tells learners apart
# by nothing; below TOO_HARD: nearly no one did (often a wrong key).
TOO_EASY = 0.95
TOO_HARD = 0.10
# A wrong answer is "common" when at least this many gave it, or at least
# this share of the question's responses did.
COMMON_WRONG_COUNT = 2
COMMON_WRONG_PERCENT = 10
# A fraction below this is not full marks: its answer counts as wrong.
_FULL_MARKS = 1 - 1e-9
_DECIMALS = 4


@dataclass(frozen=True)
class Response:
    """One attempt's response on one slot, whatever question it drew.

    fraction is the score on the item (0..1), max_points the slot's points;
    choice is the option text chosen (choice questions, None if none);
    answer the normalised answer text (numeric questions); misconception a
    label for the known misconception the wrong answer matched, if any.
    """

    attempt: int
    slot: int
    question: str
    fraction: float
    max_points: float
    choice: str | None = None
    answer: str | None = None
    misconception: str | None = None


@dataclass
class Flag:
    """Something an instructor should look at: a code and a full sentence."""

    code: str
    reason: str


@dataclass
class OptionStatistics:
    """Who chose an option: share of all, of the top and of the bottom group.

    correct is None when the caller did not say which option is right.
    top_share/bottom_share are None when no attempt of that group drew the
    question. listed is False for a choice that is not in the option list
    the caller gave (a sign the list and the data disagree).
    """

    option: str
    correct: bool | None
    count: int
    share: float
    top_share: float | None
    bottom_share: float | None
    listed: bool = True

    def to_dict(self) -> dict:
        return _as_dict(self)


@dataclass
class WrongAnswer:
    """A wrong answer several learners gave: a misconception to teach to."""

    answer: str
    count: int
    share: float
    misconception: str | None

    def to_dict(self) -> dict:
        return _as_dict(self)


@dataclass
class QuestionStatistics:
    """One question's figures over the attempts that drew it in its slot."""

    question: str
    n: int
    facility: float | None
    sd: float | None
    discrimination: float | None
    efficiency: float | None
    options: list[OptionStatistics] = field(default_factory=list)
    wrong_answers: list[WrongAnswer] = field(default_factory=list)
    flags: list[Flag] = field(default_factory=list)

    @property
    def unused_options(self) -> list[str]:
        """Listed options nobody chose (the right one included)."""
        return [o.option for o in self.options if o.listed and o.count == 0]

    def to_dict(self) -> dict:
        data = _as_dict(self)
        data["unused_options"] = self.unused_options
        return data


@dataclass
class SlotStatistics:
    """One slot's figures over all its responses, whichever question."""

    slot: int
    n: int
    facility: float | None
    sd: float | None
    discrimination: float | None
    efficiency: float | None
    questions: list[QuestionStatistics] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            **_as_dict(self, skip=("questions",)),
            "questions": [q.to_dict() for q in self.questions],
        }


CSV_HEADER = [
    "slot",
    "question",
    "n",
    "facility",
    "sd",
    "discrimination",
    "efficiency",
    "unused_options",
    "common_wrong_answers",
    "flags",
]


@dataclass
class QuizStatistics:
    """The whole report: quiz figures and each slot's, in slot order.

    group_size is how many attempts make each of the top and bottom groups.
    """

    attempts: int
    mean: float | None
    sd: float | None
    alpha: float | None
    slots: list[SlotStatistics] = field(default_factory=list)
    group_size: int = 0

    def to_dict(self) -> dict:
        """JSON-ready: floats rounded to 4 places, None for undefined."""
        return {
            **_as_dict(self, skip=("slots",)),
            "slots": [s.to_dict() for s in self.slots],
        }

    def csv_rows(self) -> Iterator[list]:
        """The header, then one row per question (slot order).

        Values are left raw (None for undefined); quiz.teaching.csv_files.
        csv_text makes them safe to open in a spreadsheet.
        """
        yield list(CSV_HEADER)
        for slot in self.slots:
            for q in slot.questions:
                yield [
                    slot.slot,
                    q.question,
                    q.n,
                    _rounded(q.facility),
                    _rounded(q.sd),
                    _rounded(q.discrimination),
                    _rounded(q.efficiency),
                    "; ".join(q.unused_options),
                    "; ".join(f"{w.answer} ({w.count})" for w in q.wrong_answers),
                    "; ".join(f.code for f in q.flags),
                ]


def item_analysis(
    responses: Iterable[Response],
    *,
    options: Mapping[str, Sequence[str]] | None = None,
    correct_options: Mapping[str, str | Collection[str]] | None = None,
) -> QuizStatistics:
    """Analyse a quiz's responses, one per (attempt, slot).

    options maps a choice question to its option texts, so that options
    nobody chose are known; correct_options maps it to its right option (or
    a collection of them). Two responses for the same (attempt, slot) are
    a caller's error (ValueError): which one counts would be a guess.

    Top and bottom groups: the attempts are ranked by total, highest first,
    ties by attempt id (lower id first); each group is the first (top) or
    last (bottom) max(1, round(0.27 * N)) of them, rounding half up. Ties
    thus break the same way in every run.
    """
    options = options or {}
    correct_options = correct_options or {}
    by_attempt: dict[int, dict[int, Response]] = defaultdict(dict)
    for response in responses:
        slots = by_attempt[response.attempt]
        if response.slot in slots:
            raise ValueError(
                f"Two responses for attempt {response.attempt}, slot {response.slot}."
            )
        slots[response.slot] = response

    score = {
        (a, s): r.fraction * r.max_points
        for a, slots in by_attempt.items()
        for s, r in slots.items()
    }
    totals = {
        a: math.fsum(score[a, s] for s in slots) for a, slots in by_attempt.items()
    }
    # The rest of the test, summed over the other slots rather than as
    # total - item, so attempts equal elsewhere get exactly equal rests.
    rest = {
        (a, s): math.fsum(score[a, t] for t in slots if t != s)
        for a, slots in by_attempt.items()
        for s in slots
    }

    ranked = sorted(totals, key=lambda a: (-totals[a], a))
    n_attempts = len(ranked)
    group_size = _group_size(n_attempts) if n_attempts else 0
    top = set(ranked[:group_size])
    bottom = set(ranked[n_attempts - group_size :])

    by_slot: dict[int, list[Response]] = defaultdict(list)
    for slots in by_attempt.values():
        for s, r in slots.items():
            by_slot[s].append(r)

    slot_stats = []
    item_variances = []
    for s in sorted(by_slot):
        slot_responses = sorted(by_slot[s], key=lambda r: r.attempt)
        xs = [score[r.attempt, s] for r in slot_responses]
        item_variances.append(_sample_variance(xs))
        figures = _figures(slot_responses, score, rest)
        by_question: dict[str, list[Response]] = defaultdict(list)
        for r in slot_responses:
            by_question[r.question].append(r)
        questions = [
            _question_statistics(
                question,
                by_question[question],
                score,
                rest,
                top=top,
                bottom=bottom,
                options=options.get(question),
                correct=_as_set(correct_options.get(question)),
            )
            for question in sorted(by_question)
        ]
        slot_stats.append(SlotStatistics(s, *figures, questions=questions))

    total_values = [totals[a] for a in ranked]
    return QuizStatistics(
        attempts=n_attempts,
        mean=_mean(total_values),
        sd=_sample_sd(total_values),
        alpha=_cronbach_alpha(item_variances, _sample_variance(total_values)),
        slots=slot_stats,
        group_size=group_size,
    )


def _group_size(n_attempts: int) -> int:
    """max(1, round(27% of N)), half up, in integers (no float rounding)."""
    return max(1, (GROUP_SHARE_PERCENT * n_attempts + 50) // 100)


def _figures(
    responses: list[Response],
    score: Mapping[tuple[int, int], float],
    rest: Mapping[tuple[int, int], float],
) -> tuple[int, float | None, float | None, float | None, float | None]:
    """n, facility, SD, discrimination and efficiency of a set of responses."""
    n = len(responses)
    xs = [score[r.attempt, r.slot] for r in responses]
    rests = [rest[r.attempt, r.slot] for r in responses]
    max_points = max((r.max_points for r in responses), default=0.0)
    mean = _mean(xs)
    sd = _sample_sd(xs)
    if max_points > 0 and mean is not None:
        facility = mean / max_points
        sd = None if sd is None else sd / max_points
    else:  # a slot worth nothing has no facility
        facility = sd = None
    return (
        n,
        facility,
        sd,
        _discrimination(xs, rests),
        _efficiency(xs, rests),
    )


def _question_statistics(
    question: str,
    responses: list[Response],
    score: Mapping[tuple[int, int], float],
    rest: Mapping[tuple[int, int], float],
    *,
    top: set[int],
    bottom: set[int],
    options: Sequence[str] | None,
    correct: set[str] | None,
) -> QuestionStatistics:
    n, facility, sd, discrimination, efficiency = _figures(responses, score, rest)
    option_stats = _option_statistics(
        responses, top=top, bottom=bottom, options=options, correct=correct
    )
    stats = QuestionStatistics(
        question=question,
        n=n,
        facility=facility,
        sd=sd,
        discrimination=discrimination,
        efficiency=efficiency,
        options=option_stats,
        wrong_answers=_wrong_answers(responses),
    )
    stats.flags = _flags(stats)
    return stats


def _option_statistics(
    responses: list[Response],
    *,
    top: set[int],
    bottom: set[int],
    options: Sequence[str] | None,
    correct: set[str] | None,
) -> list[OptionStatistics]:
    """One entry per listed option, then any choice the list lacks.

    A question is a choice question when the caller lists its options or
    some response has a choice; shares are of all the question's responses,
    unanswered ones included, so they need not add up to 1.
    """
    chosen = Counter(r.choice for r in responses if r.choice is not None)
    if options is None and not chosen:
        return []
    listed = list(dict.fromkeys(options or ()))
    unlisted = sorted(set(chosen) - set(listed))
    n = len(responses)
    in_top = [r for r in responses if r.attempt in top]
    in_bottom = [r for r in responses if r.attempt in bottom]

    def share_in(group: list[Response], option: str) -> float | None:
        if not group:
            return None
        return sum(r.choice == option for r in group) / len(group)

    return [
        OptionStatistics(
            option=option,
            correct=None if correct is None else option in correct,
            count=chosen[option],
            share=chosen[option] / n,
            top_share=share_in(in_top, option),
            bottom_share=share_in(in_bottom, option),
            listed=option not in unlisted,
        )
        for option in listed + unlisted
    ]


def _wrong_answers(responses: list[Response]) -> list[WrongAnswer]:
    """Answers without full marks given by >= 2 learners or >= 10% of them.

    Partial credit counts as wrong here: a common half-right answer is a
    misconception to teach to as well. Most common first, then by text.
    """
    n = len(responses)
    wrong: dict[str, list[Response]] = defaultdict(list)
    for r in responses:
        if r.answer is not None and r.fraction < _FULL_MARKS:
            wrong[r.answer].append(r)
    common = [
        (answer, given)
        for answer, given in wrong.items()
        if len(given) >= COMMON_WRONG_COUNT
        or 100 * len(given) >= COMMON_WRONG_PERCENT * n
    ]
    common.sort(key=lambda item: (-len(item[1]), item[0]))
    return [
        WrongAnswer(
            answer=answer,
            count=len(given),
            share=len(given) / n,
            misconception=_most_common(r.misconception for r in given),
        )
        for answer, given in common
    ]


def _flags(stats: QuestionStatistics) -> list[Flag]:
    """What an instructor should check, each as a sentence with its figures."""
    flags = []
    d = stats.discrimination
    if d is not None and d < 0:
        flags.append(
            Flag(
                "negative-discrimination",
                f"Discrimination {d:.2f}: learners who did better on the rest "
                "of the quiz did worse on this one; check the key.",
            )
        )
    f = stats.facility
    if f is not None and f > TOO_EASY:
        flags.append(
            Flag(
                "too-easy",
                f"Facility {f:.2f}: learners scored {f:.0%} on it on average; "
                "it does not separate learners.",
            )
        )
    if f is not None and f < TOO_HARD:
        flags.append(
            Flag(
                "too-hard",
                f"Facility {f:.2f}: learners scored {f:.0%} on it on average; "
                "check the key and the wording, or teach it again.",
            )
        )
    for option in stats.options:
        if option.listed and option.count == 0 and option.correct is not True:
            flags.append(
                Flag(
                    "unused-distractor",
                    f'Nobody chose "{option.option}" (0 of {stats.n} '
                    "responses); a distractor no one picks only adds reading: "
                    "make it plausible or drop it.",
                )
            )
    return flags


# Arithmetic. math.fsum keeps sums exact enough that equal data gives equal
# results; a constant series is detected by equality, not by a tiny variance.


def _mean(xs: Sequence[float]) -> float | None:
    return math.fsum(xs) / len(xs) if xs else None


def _constant(xs: Sequence[float]) -> bool:
    return min(xs) == max(xs)


def _centered_cross(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Sum of (x - mean x)(y - mean y): n - 1 times the sample covariance."""
    mx, my = math.fsum(xs) / len(xs), math.fsum(ys) / len(ys)
    return math.fsum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))


def _sample_variance(xs: Sequence[float]) -> float | None:
    if len(xs) < 2:
        return None
    if _constant(xs):
        return 0.0
    return _centered_cross(xs, xs) / (len(xs) - 1)


def _sample_sd(xs: Sequence[float]) -> float | None:
    variance = _sample_variance(xs)
    return None if variance is None else math.sqrt(variance)


def _discrimination(xs: Sequence[float], rests: Sequence[float]) -> float | None:
    """Pearson correlation of the item with the rest of the test (-1..1)."""
    if len(xs) < 2 or _constant(xs) or _constant(rests):
        return None
    sxx, syy = _centered_cross(xs, xs), _centered_cross(rests, rests)
    r = _centered_cross(xs, rests) / math.sqrt(sxx * syy)
    return max(-1.0, min(1.0, r))


def _efficiency(xs: Sequence[float], rests: Sequence[float]) -> float | None:
    """cov(item, rest) over the largest covariance their marginals allow.

    That largest covariance pairs the sorted item scores with the sorted
    rests. The ratio is at most 1; it can fall below -1 when the marginals
    are skewed, as Moodle's can.
    """
    if len(xs) < 2 or _constant(xs) or _constant(rests):
        return None
    largest = _centered_cross(sorted(xs), sorted(rests))
    if largest <= 0:  # only by rounding: both series vary
        return None
    return min(1.0, _centered_cross(xs, rests) / largest)


def _cronbach_alpha(
    item_variances: Sequence[float | None], total_variance: float | None
) -> float | None:
    """k/(k-1) * (1 - sum of item variances / variance of the totals)."""
    k = len(item_variances)
    if k < 2 or not total_variance or any(v is None for v in item_variances):
        return None
    return k / (k - 1) * (1 - math.fsum(item_variances) / total_variance)


def _most_common(labels: Iterable[str | None]) -> str | None:
    counts = Counter(label for label in labels if label is not None)
    if not counts:
        return None
    return min(counts, key=lambda label: (-counts[label], label))


def _as_set(correct: str | Collection[str] | None) -> set[str] | None:
    if correct is None:
        return None
    return {correct} if isinstance(correct, str) else set(correct)


def _rounded(value):
    """A float rounded for output; NaN or infinity (bad input) become None."""
    if isinstance(value, float):
        return round(value, _DECIMALS) if math.isfinite(value) else None
    return value


def _as_dict(obj, skip: Sequence[str] = ()) -> dict:
    """A dataclass's fields, JSON-ready: nested ones as dicts, floats rounded."""
    data = {}
    for f in fields(obj):
        if f.name in skip:
            continue
        value = getattr(obj, f.name)
        if isinstance(value, list):
            value = [_as_dict(v) if is_dataclass(v) else _rounded(v) for v in value]
        data[f.name] = _rounded(value)
    return data
