"""A quiz's item analysis from its attempts, with the misconceptions named.

calculation.item_analysis does the arithmetic on plain responses; this
module turns submitted attempts into those responses and names each
question for an instructor. A question whose prompt differs per learner (a
template's numbers) is shown by its title and "numbers differ per learner",
never by one learner's variant; its options are analysed by what they mean
("right answer", or the misconception that gives that number), not by their
text, and a wrong numeric answer that a misconception explains is counted
under that misconception ("the answer of: ..."). A question with a fixed
prompt (a self-check, a quiz-only question: any ref the bank draws the same
for every seed) is named by its prompt's first words and its options by
their text. A code answer that failed counts under its first failed check
and that check's diagnosis. Each such misconception links to the course's
diagnosis and the lessons that teach it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from grading_engine.quiz_bank.numbers import NotANumber, parse_number
from grading_engine.quiz_bank.variants import show

from quiz.content.models import Diagnosis
from teaching.quizzes.bank import Bank, Drawn, matches_wrong
from teaching.quizzes.changes import changed, quiz_changes
from teaching.quizzes.item_analysis.calculation import (
    QuizStatistics,
    Response,
    item_analysis,
)
from teaching.quizzes.models import Quiz, QuizAttempt, QuizCodeAnswer

RIGHT = "the right answer"
VARIES = "numbers differ per learner"
NOT_IN_BANK = "no longer in the course"
# A fixed prompt's first words name its question: about a line of the table.
NAME_CHARS = 70
# Seeds a question is drawn with, beside (some of) the attempts' own, to
# tell a prompt that differs per learner from a fixed one (8 agreeing draws
# of a template with even two variants happen once in 128).
_PROBES = tuple(f"item-analysis-probe-{n}" for n in range(8))
_ATTEMPT_SEEDS = 24


@dataclass
class Analysis:
    stats: QuizStatistics
    slot_labels: dict[int, str]  # calculation's slot id -> "2" or "2.1"
    titles: dict[str, str]  # question ref -> the name an instructor reads
    prompts: dict[str, str]  # ref -> its fixed prompt; "" if it varies
    diagnoses: dict[str, dict]  # slug -> {summary, lessons: [{slug, title}]}
    says: dict[str, str]  # diagnosis slug -> what the learner did
    varies: set[str] = field(default_factory=set)  # refs drawn per learner
    sources: dict[str, str] = field(default_factory=dict)  # ref -> lesson etc.
    kinds: dict[str, str] = field(default_factory=dict)  # ref -> drawn kind
    # A fixed choice's wrong option -> the misconception it names (slug or
    # what the learner did): (ref, option text) -> key into `says`.
    chosen: dict[tuple[str, str], str] = field(default_factory=dict)


def _number_text(value) -> str:
    try:
        number = parse_number(value)
    except NotANumber:
        return str(value)
    return show(int(number) if number == number.to_integral_value() else float(number))


def _failed_check(submission, says: dict) -> tuple[str | None, str | None]:
    """A code answer's first failed check, as an answer and its diagnosis:
    the first that names a mistake, if one does (a tensor's wrong values
    fail a "values" check first, and the "likely mistake" after it names
    the diagnosis)."""
    if submission is None or submission.status != "failed":
        return None, None
    failed = [c for c in submission.checks or [] if not c.get("passed")]
    check = next((c for c in failed if c.get("diagnosis")), None) or next(
        iter(failed), None
    )
    if check is None:
        return None, None
    text = f"code that failed the check “{check.get('name', '')}”"
    diagnosis = check.get("diagnosis") or None
    if diagnosis:
        says[diagnosis] = text
    return text, diagnosis


def _recorded(results: list, n: int) -> float | None:
    """Item n's fraction as scored; None if never recorded (or not a number)."""
    value = results[n - 1] if n <= len(results) else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _face(drawn: Drawn) -> tuple:
    return (drawn.prompt, tuple(drawn.options), str(drawn.answer))


def _differs(bank: Bank, ref: str, seeds: set[str]) -> bool:
    """Whether the bank draws `ref` differently for different seeds.

    No prefix is read: a template's numbers differ per seed, a self-check,
    a quiz-only question or an exercise draws the same for every seed.
    """
    first = None
    for seed in (*_PROBES, *sorted(seeds)[:_ATTEMPT_SEEDS]):
        face = _face(bank.draw(ref, seed))
        if first is None:
            first = face
        elif face != first:
            return True
    return False


def short_prompt(prompt: str, limit: int = NAME_CHARS) -> str:
    """A fixed prompt's first words: its first paragraph, cut at a word.

    A cut never leaves a code span or a $...$ formula open.
    """
    text = " ".join(prompt.strip().split("\n\n", 1)[0].split())
    if len(text) <= limit:
        return text
    cut = text[: limit + 1].rsplit(" ", 1)[0] if " " in text[:limit] else text[:limit]
    for mark in ("`", "$"):
        if cut.count(mark) % 2:
            cut = cut[: cut.rindex(mark)].rstrip()
    cut = re.sub(r"[\s,;:.(\[-]+$", "", cut)
    return f"{cut}…"


def quiz_analysis(quiz: Quiz) -> Analysis:
    attempts = list(
        QuizAttempt.objects.filter(
            quiz=quiz, preview=False, state=QuizAttempt.State.SUBMITTED
        ).order_by("pk")
    )
    bank = Bank(item["ref"] for a in attempts for item in a.items)
    changes = quiz_changes(quiz.pk)  # this quiz's own keys (a regraded question)
    codes = {
        (row.attempt_id, row.item): row.submission
        for row in QuizCodeAnswer.objects.filter(
            attempt__in=attempts, submission__isnull=False
        ).select_related("submission")
    }
    draws = dict(quiz.slots.values_list("pk", "draw"))
    # Each drawn question's place: (slot number, k-th draw of that slot),
    # numbered in quiz order whatever order an attempt showed them in.
    placed = []
    seeds: dict[str, set[str]] = {}
    for attempt in attempts:
        count: dict[int, int] = {}
        for n, item in enumerate(attempt.items, start=1):
            k = count[item["slot"]] = count.get(item["slot"], 0) + 1
            placed.append((attempt, n, item, (item["slot_number"], k)))
            seeds.setdefault(item["ref"], set()).add(item["seed"])
    positions = {
        key: number
        for number, key in enumerate(sorted({key for *_, key in placed}), start=1)
    }
    labels: dict[int, str] = {}
    varies = {ref for ref in seeds if bank.has(ref) and _differs(bank, ref, seeds[ref])}
    responses, options, correct = [], {}, {}
    titles, prompts, sources, kinds, says, chosen = {}, {}, {}, {}, {}, {}
    for attempt, n, item, key in placed:
        slot = positions[key]
        multi = draws.get(item["slot"], 1) > 1
        labels[slot] = f"{key[0]}.{key[1]}" if multi else str(key[0])
        ref = item["ref"]
        value = (attempt.answers.get(str(n)) or {}).get("value")
        choice = answer = misconception = None
        if bank.has(ref):
            drawn = changed(bank.draw(ref, item["seed"]), changes.get(ref))
            if ref not in titles:
                _name(ref, drawn, ref in varies, titles, prompts, sources)
                kinds[ref] = drawn.kind
            stored = value
            if drawn.kind == "choice" and isinstance(value, int):
                stored = item["order"][value] if value < len(item["order"]) else None
            wrong = matches_wrong(drawn, stored)
            if wrong is not None:
                misconception = wrong.diagnosis or wrong.says
                says[misconception] = wrong.says
            if drawn.kind == "code":
                answer, misconception = _failed_check(codes.get((attempt.pk, n)), says)
            elif drawn.kind == "choice":
                if ref in varies:
                    # Options by meaning: each variant has its own numbers.
                    options[ref] = [RIGHT, *[w.says for w in drawn.wrong]]
                    correct[ref] = RIGHT
                    if stored == drawn.correct:
                        choice = RIGHT
                    elif wrong is not None:
                        choice = wrong.says
                else:
                    options[ref] = drawn.options
                    correct[ref] = drawn.options[drawn.correct]
                    if isinstance(stored, int):
                        choice = drawn.options[stored]
                        if misconception is not None:
                            chosen[ref, choice] = misconception
            elif value not in (None, ""):
                answer = (
                    f"the answer of: {wrong.says}"
                    if wrong and ref in varies
                    else _number_text(value)
                )
        else:
            titles.setdefault(ref, f"{ref} ({NOT_IN_BANK})")
            prompts.setdefault(ref, "")
        responses.append(
            Response(
                attempt=attempt.pk,
                slot=slot,
                question=ref,
                fraction=_recorded(attempt.results, n),
                max_points=float(item["points"]),
                choice=choice,
                answer=answer,
                misconception=misconception,
            )
        )
    stats = item_analysis(responses, options=options, correct_options=correct)
    diagnoses = {
        d.slug: {
            "summary": d.summary,
            "lessons": [{"slug": le.slug, "title": le.title} for le in d.lessons.all()],
        }
        for d in Diagnosis.objects.filter(slug__in=says).prefetch_related("lessons")
    }
    return Analysis(
        stats, labels, titles, prompts, diagnoses, says, varies, sources, kinds, chosen
    )


def _name(ref, drawn: Drawn, varies: bool, titles, prompts, sources) -> None:
    """How the page names a question, and the prompt it may show.

    Per-learner numbers: the title, no prompt (one learner's numbers are
    not the question). Code: its title and prompt. A fixed prompt: its
    first words, the whole prompt, and the title it came under (a
    self-check's is its lesson's, shared by the lesson's other questions).
    """
    if varies:
        titles[ref], prompts[ref] = drawn.title, ""
    elif drawn.kind == "code" or not drawn.prompt.strip():
        titles[ref], prompts[ref] = drawn.title, drawn.prompt.strip()
    else:
        titles[ref] = short_prompt(drawn.prompt)
        prompts[ref] = drawn.prompt.strip()
        if drawn.title:
            sources[ref] = drawn.title


def insights(analysis: Analysis) -> dict[str, list[dict]]:
    """Per question: the misconceptions learners showed, most common first.

    "31% chose the answer of: counted the tied head twice", with the
    diagnosis and the lessons to send them to.
    """
    found: dict[str, list[dict]] = {}
    for slot in analysis.stats.slots:
        for q in slot.questions:
            rows = []
            for option in q.options:
                if option.correct or not option.count or option.share is None:
                    continue
                if q.question in analysis.varies:  # options by meaning
                    slug, text = _slug_for(analysis, option.option), option.option
                else:  # a fixed option: only one a misconception names
                    slug = analysis.chosen.get((q.question, option.option))
                    if slug is None:
                        continue
                    text = analysis.says.get(slug, option.option)
                rows.append(_insight(analysis, option.share, text, slug, "chose"))
            for wrong in q.wrong_answers:
                if wrong.misconception:
                    text = analysis.says.get(wrong.misconception, wrong.answer)
                    rows.append(
                        _insight(
                            analysis, wrong.share, text, wrong.misconception, "gave"
                        )
                    )
            if rows:
                rows.sort(key=lambda r: -r["share"])
                found.setdefault(q.question, []).extend(rows)
    return found


def _slug_for(analysis: Analysis, says: str) -> str | None:
    return next((s for s, text in analysis.says.items() if text == says), None)


def _insight(analysis: Analysis, share: float, says: str, slug, verb: str) -> dict:
    diagnosis = analysis.diagnoses.get(slug or "", {})
    return {
        "share": round(share, 4),
        "text": f"{share * 100:.0f}% {verb} the answer of: {says}",
        "diagnosis": slug if diagnosis else None,
        "summary": diagnosis.get("summary", ""),
        "lessons": diagnosis.get("lessons", []),
    }


def analysis_dict(analysis: Analysis) -> dict:
    """The API's and the page's shape: statistics plus names and insights.

    Per question: item (its number, as in the CSV), title (the name),
    prompt (its fixed prompt; "" when it varies), varies (its numbers differ
    per learner), source (a fixed prompt's lesson or title), kind.
    """
    data = analysis.stats.to_dict()
    found = insights(analysis)
    for slot in data["slots"]:
        slot["label"] = analysis.slot_labels.get(slot["slot"], str(slot["slot"]))
        for q in slot["questions"]:
            ref = q["question"]
            q["title"] = analysis.titles.get(ref, ref)
            q["prompt"] = analysis.prompts.get(ref, "")
            q["varies"] = ref in analysis.varies
            q["source"] = analysis.sources.get(ref, "")
            q["kind"] = analysis.kinds.get(ref)
            q["misconceptions"] = found.get(ref, [])
    return data


def csv_rows(analysis: Analysis) -> list[list]:
    """The CSV: a header, then one row per question, numbered as on the page."""
    return list(
        analysis.stats.csv_rows(labels=analysis.slot_labels, titles=analysis.titles)
    )
