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
- for the quiz: the mean and SD of the attempts' scores (fractions of
  their points, as the results' score), the same in points beside the
  points possible, and Cronbach's alpha;
- flags an instructor reads: negative discrimination, too easy, too hard,
  a distractor nobody chose; only on a question with at least
  MIN_RESPONSES_TO_FLAG responses (below that its note says so).

Every question is numbered (`item`, 1.. in slot order, as the page and the
CSV number it), and every question the caller names in `expected` or gives
a response for is in the report, even one with no recorded response (its
note says "no responses").

A result that is not a finite number (None, NaN, infinity: a dropped or
broken item) is "not recorded": left out, and counted (`not_recorded`).
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
# Flags need at least this many responses to a question: with fewer, one
# learner moves the facility by 20 points or more, and a distractor that
# none of three learners chose says nothing about the distractor.
MIN_RESPONSES_TO_FLAG = 5
NO_RESPONSES = "no responses"
TOO_FEW_TO_FLAG = f"too few responses (n < {MIN_RESPONSES_TO_FLAG}) to flag"
# A fraction below this is not full marks: its answer counts as wrong.
_FULL_MARKS = 1 - 1e-9
_DECIMALS = 4


@dataclass(frozen=True)
class Response:
    """One attempt's response on one slot, whatever question it drew.

    fraction is the score on the item (0..1), max_points the slot's points;
    a fraction (or max_points) that is None, NaN or infinite was not
    recorded: see item_analysis;
    choice is the option text chosen (choice questions, None if none);
    answer the normalised answer text (numeric questions); misconception a
    label for the known misconception the wrong answer matched, if any.
    """

    attempt: int
    slot: int
    question: str
    fraction: float | None
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
    share: float | None
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
    """One question's figures over the attempts that drew it in its slot.

    n counts the recorded responses, not_recorded the others (left out).
    item is its number in the report (1.., slot order). flags_withheld is
    True when n < MIN_RESPONSES_TO_FLAG: flags is then empty whatever the
    figures, and note says why ("no responses" or "too few responses (n <
    5) to flag"); note is None otherwise.
    """

    question: str
    n: int
    facility: float | None
    sd: float | None
    discrimination: float | None
    efficiency: float | None
    options: list[OptionStatistics] = field(default_factory=list)
    wrong_answers: list[WrongAnswer] = field(default_factory=list)
    flags: list[Flag] = field(default_factory=list)
    item: int = 0
    not_recorded: int = 0
    flags_withheld: bool = False
    note: str | None = None

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
    not_recorded: int = 0

    def to_dict(self) -> dict:
        return {
            **_as_dict(self, skip=("questions",)),
            "questions": [q.to_dict() for q in self.questions],
        }


CSV_HEADER = [
    "item",
    "slot",
    "question",
    "title",
    "n",
    "not_recorded",
    "facility",
    "sd",
    "discrimination",
    "efficiency",
    "unused_options",
    "common_wrong_answers",
    "flags",
    "note",
]


@dataclass
class QuizStatistics:
    """The whole report: quiz figures and each slot's, in slot order.

    One scale, an attempt's score's: mean and sd are of the attempts'
    scores, each its total over its possible points (0..1, 0 when it has
    none), as the results' score is; mean_points and sd_points are of the
    totals, in points; possible is the points an attempt is out of, the
    sum of its recorded responses' max_points (their mean, should attempts
    differ: a result not recorded leaves its points out of its attempt's
    possible, as a dropped question does). When every attempt is out of
    the same points, mean = mean_points / possible. group_size is how many
    attempts make each of the top and bottom groups; not_recorded how many
    responses were left out (not a finite number).
    """

    attempts: int
    mean: float | None
    sd: float | None
    alpha: float | None
    slots: list[SlotStatistics] = field(default_factory=list)
    group_size: int = 0
    mean_points: float | None = None
    sd_points: float | None = None
    possible: float = 0.0
    not_recorded: int = 0
    min_responses_to_flag: int = MIN_RESPONSES_TO_FLAG

    def to_dict(self) -> dict:
        """JSON-ready: floats rounded to 4 places, None for undefined."""
        return {
            **_as_dict(self, skip=("slots",)),
            "slots": [s.to_dict() for s in self.slots],
        }

    def csv_rows(
        self,
        *,
        labels: Mapping[int, str] | None = None,
        titles: Mapping[str, str] | None = None,
    ) -> Iterator[list]:
        """The header, then one row per question, numbered by item as the page.

        labels names the slots (default: their number), titles the
        questions (default: the question key). Values are left raw (None
        for undefined); teaching.csv_files.csv_text makes them safe
        to open in a spreadsheet.
        """
        labels, titles = labels or {}, titles or {}
        yield list(CSV_HEADER)
        for slot in self.slots:
            for q in slot.questions:
                yield [
                    q.item,
                    labels.get(slot.slot, slot.slot),
                    q.question,
                    titles.get(q.question, q.question),
                    q.n,
                    q.not_recorded,
                    _rounded(q.facility),
                    _rounded(q.sd),
                    _rounded(q.discrimination),
                    _rounded(q.efficiency),
                    "; ".join(q.unused_options),
                    "; ".join(f"{w.answer} ({w.count})" for w in q.wrong_answers),
                    "; ".join(f.code for f in q.flags),
                    q.note or "",
                ]


def item_analysis(
    responses: Iterable[Response],
    *,
    options: Mapping[str, Sequence[str]] | None = None,
    correct_options: Mapping[str, str | Collection[str]] | None = None,
    expected: Iterable[tuple[int, str]] = (),
) -> QuizStatistics:
    """Analyse a quiz's responses, one per (attempt, slot).

    options maps a choice question to its option texts, so that options
    nobody chose are known; correct_options maps it to its right option (or
    a collection of them). expected lists (slot, question) pairs the report
    shows even if no response names them ("no responses"), so that an item
    nobody answered does not vanish. Two responses for the same (attempt,
    slot) are a caller's error (ValueError): which one counts would be a
    guess.

    A response whose fraction (or max_points) is None, NaN or infinite is
    not recorded: it is left out of every figure (its attempt's total and
    possible points, its slot's and its question's), and counted in
    not_recorded of the quiz, slot and question. Left out rather than
    refused: such a value comes from one dropped or broken item, and
    refusing would blank the whole report, every sound question's figures
    with it, over one cell; left out, the rest stays right and the counts
    say what is missing. Left out rather than read as 0: a dropped
    question's points leave the attempt's total and possible when it is
    scored, and a NaN read as 0 would mark every learner wrong on it
    (facility 0, flagged too hard) for a fault that is not theirs.

    Top and bottom groups: the attempts are ranked by total, highest first,
    ties by attempt id (lower id first); each group is the first (top) or
    last (bottom) max(1, round(0.27 * N)) of them, rounding half up. Ties
    thus break the same way in every run.
    """
    options = options or {}
    correct_options = correct_options or {}
    by_attempt: dict[int, dict[int, Response]] = defaultdict(dict)
    seen: set[tuple[int, int]] = set()
    unrecorded: Counter[tuple[int, str]] = Counter()
    asked: dict[int, set[str]] = defaultdict(set)
    for slot, question in expected:
        asked[slot].add(question)
    for response in responses:
        key = (response.attempt, response.slot)
        if key in seen:
            raise ValueError(
                f"Two responses for attempt {response.attempt}, slot {response.slot}."
            )
        seen.add(key)
        by_attempt.setdefault(response.attempt, {})
        asked[response.slot].add(response.question)
        if _recorded(response):
            by_attempt[response.attempt][response.slot] = response
        else:
            unrecorded[response.slot, response.question] += 1

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
    item = 0
    for s in sorted(asked):
        slot_responses = sorted(by_slot[s], key=lambda r: r.attempt)
        if slot_responses:  # a slot with no recorded response adds nothing
            xs = [score[r.attempt, s] for r in slot_responses]
            item_variances.append(_sample_variance(xs))
        figures = _figures(slot_responses, score, rest)
        by_question: dict[str, list[Response]] = defaultdict(list)
        for r in slot_responses:
            by_question[r.question].append(r)
        questions = []
        for question in sorted(asked[s]):
            item += 1
            questions.append(
                _question_statistics(
                    question,
                    by_question[question],
                    score,
                    rest,
                    top=top,
                    bottom=bottom,
                    options=options.get(question),
                    correct=_as_set(correct_options.get(question)),
                    item=item,
                    not_recorded=unrecorded[s, question],
                )
            )
        slot_stats.append(
            SlotStatistics(
                s,
                *figures,
                questions=questions,
                not_recorded=sum(q.not_recorded for q in questions),
            )
        )

    total_values = [totals[a] for a in ranked]
    # Out of: the points of the slots each attempt has recorded.
    out_of = [math.fsum(r.max_points for r in by_attempt[a].values()) for a in ranked]
    scores = [
        t / p if p > 0 else 0.0 for t, p in zip(total_values, out_of, strict=True)
    ]
    return QuizStatistics(
        attempts=n_attempts,
        mean=_mean(scores),
        sd=_sample_sd(scores),
        alpha=_cronbach_alpha(item_variances, _sample_variance(total_values)),
        slots=slot_stats,
        group_size=group_size,
        mean_points=_mean(total_values),
        sd_points=_sample_sd(total_values),
        possible=_mean(out_of) or 0.0,
        not_recorded=sum(unrecorded.values()),
    )


def _recorded(response: Response) -> bool:
    """Whether a response's fraction and points are finite numbers."""
    return all(
        isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
        for v in (response.fraction, response.max_points)
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
    item: int,
    not_recorded: int,
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
        item=item,
        not_recorded=not_recorded,
    )
    if n < MIN_RESPONSES_TO_FLAG:
        stats.flags_withheld = True
        stats.note = NO_RESPONSES if n == 0 else TOO_FEW_TO_FLAG
    else:
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
    unanswered ones included, so they need not add up to 1 (None when it
    has no recorded response).
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
            share=chosen[option] / n if n else None,
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
