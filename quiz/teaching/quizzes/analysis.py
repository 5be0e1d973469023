"""A quiz's item analysis from its attempts, with the misconceptions named.

statistics.item_analysis does the arithmetic on plain responses; this
module turns submitted attempts into those responses. A template's
variants differ per learner, so its options are analysed by what they
mean ("right answer", or the misconception that gives that number), not
by their text; a wrong numeric answer that a misconception explains is
counted under that misconception. A code answer that failed counts under
its first failed check and that check's diagnosis. Each such misconception
links to the course's diagnosis and the lessons that teach it.
"""

from __future__ import annotations

from dataclasses import dataclass

from grading_engine.quiz_bank.numbers import NotANumber, parse_number
from grading_engine.quiz_bank.variants import show

from quiz.content.models import Diagnosis
from quiz.teaching.quizzes.bank import Bank, matches_wrong
from quiz.teaching.quizzes.models import Quiz, QuizAttempt, QuizCodeAnswer
from quiz.teaching.quizzes.statistics import QuizStatistics, Response, item_analysis

RIGHT = "the right answer"


@dataclass
class Analysis:
    stats: QuizStatistics
    slot_labels: dict[int, str]  # statistics' slot id -> "2" or "2.1"
    titles: dict[str, str]  # question ref -> a title an instructor reads
    prompts: dict[str, str]
    diagnoses: dict[str, dict]  # slug -> {summary, lessons: [{slug, title}]}
    says: dict[str, str]  # diagnosis slug -> what the learner did


def _number_text(value) -> str:
    try:
        number = parse_number(value)
    except NotANumber:
        return str(value)
    return show(int(number) if number == number.to_integral_value() else float(number))


def _failed_check(submission, says: dict) -> tuple[str | None, str | None]:
    """A code answer's first failed check, as an answer and its diagnosis."""
    if submission is None or submission.status != "failed":
        return None, None
    check = next((c for c in submission.checks or [] if not c.get("passed")), None)
    if check is None:
        return None, None
    text = f"code that failed the check “{check.get('name', '')}”"
    diagnosis = check.get("diagnosis") or None
    if diagnosis:
        says[diagnosis] = text
    return text, diagnosis


def quiz_analysis(quiz: Quiz) -> Analysis:
    attempts = list(
        QuizAttempt.objects.filter(
            quiz=quiz, preview=False, state=QuizAttempt.State.SUBMITTED
        ).order_by("pk")
    )
    bank = Bank(item["ref"] for a in attempts for item in a.items)
    codes = {
        (row.attempt_id, row.item): row.submission
        for row in QuizCodeAnswer.objects.filter(
            attempt__in=attempts, submission__isnull=False
        ).select_related("submission")
    }
    positions: dict[tuple[int, int], int] = {}
    labels: dict[int, str] = {}
    draws = dict(quiz.slots.values_list("pk", "draw"))
    responses, options, correct = [], {}, {}
    titles, prompts, says = {}, {}, {}
    for attempt in attempts:
        seen: dict[int, int] = {}
        for n, item in enumerate(attempt.items, start=1):
            k = seen[item["slot"]] = seen.get(item["slot"], 0) + 1
            key = (item["slot_number"], k)
            if key not in positions:
                positions[key] = len(positions) + 1
            slot = positions[key]
            multi = draws.get(item["slot"], 1) > 1
            labels[slot] = f"{key[0]}.{k}" if multi else str(key[0])
            ref = item["ref"]
            fraction = attempt.results[n - 1] if n <= len(attempt.results) else 0.0
            value = (attempt.answers.get(str(n)) or {}).get("value")
            choice = answer = misconception = None
            if bank.has(ref):
                drawn = bank.draw(ref, item["seed"])
                titles.setdefault(ref, drawn.title)
                prompts.setdefault(ref, drawn.prompt)
                stored = value
                if drawn.kind == "choice" and isinstance(value, int):
                    stored = (
                        item["order"][value] if value < len(item["order"]) else None
                    )
                wrong = matches_wrong(drawn, stored)
                if wrong is not None:
                    misconception = wrong.diagnosis or wrong.says
                    says[misconception] = wrong.says
                if drawn.kind == "code":
                    answer, misconception = _failed_check(
                        codes.get((attempt.pk, n)), says
                    )
                elif drawn.kind == "choice":
                    if ref.startswith("t:"):
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
                elif value not in (None, ""):
                    answer = (
                        f"~ {wrong.says}"
                        if wrong and ref.startswith("t:")
                        else (_number_text(value))
                    )
            responses.append(
                Response(
                    attempt=attempt.pk,
                    slot=slot,
                    question=ref,
                    fraction=float(fraction),
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
    return Analysis(stats, labels, titles, prompts, diagnoses, says)


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
                slug = _slug_for(analysis, option.option)
                if slug is None and not q.question.startswith("t:"):
                    continue
                rows.append(
                    _insight(analysis, option.share, option.option, slug, "chose")
                )
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
    """The API's and the page's shape: statistics plus titles and insights."""
    data = analysis.stats.to_dict()
    found = insights(analysis)
    for slot in data["slots"]:
        slot["label"] = analysis.slot_labels.get(slot["slot"], str(slot["slot"]))
        for q in slot["questions"]:
            q["title"] = analysis.titles.get(q["question"], q["question"])
            q["prompt"] = analysis.prompts.get(q["question"], "")
            q["misconceptions"] = found.get(q["question"], [])
    return data
