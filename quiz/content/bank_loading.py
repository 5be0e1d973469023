"""Loading the quiz bank's files: templates and quiz-only questions alike.

Both kinds are files checked before content_load's transaction and
upserted inside it, after lessons and diagnoses, by slug; each names a
section, the lessons that teach it and, per misconception, a diagnosis,
which must exist. One function loads either, so the two loaders cannot
drift apart.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from quiz.content.models import Diagnosis, Lesson, Section
from quiz.content.tree import ContentError, ContentProblem
from quiz.core.upsert import upsert


def missing_references(spec: dict, *, sections, lessons, diagnoses) -> list[str]:
    """What a checked spec names that does not exist: ["lesson x", ...]."""
    missing = [] if spec["section"] in sections else [f"section {spec['section']}"]
    missing += [f"lesson {s}" for s in spec.get("lessons") or [] if s not in lessons]
    missing += [
        f"diagnosis {m['diagnosis']}"
        for m in spec.get("misconceptions") or []
        if m.get("diagnosis") and m["diagnosis"] not in diagnoses
    ]
    return missing


def bank_rows_load(
    records: list[tuple[Path, dict]],
    relative,
    note,
    *,
    model,
    label: str,
    values: Callable[[dict], dict],
    line: int,
) -> None:
    """Upsert each (path, spec) as a `model` row with `values(spec)`, its
    section and lessons; ContentError naming every file whose references are
    missing (`line` is the line the problems point at)."""
    sections = {s.slug: s for s in Section.objects.all()}
    lessons = {le.slug: le for le in Lesson.objects.all()}
    diagnoses = set(Diagnosis.objects.values_list("slug", flat=True))
    problems = []
    for path, spec in records:
        missing = missing_references(
            spec, sections=sections, lessons=lessons, diagnoses=diagnoses
        )
        if missing:
            problems.append(ContentProblem(path, line, f"no such {', '.join(missing)}"))
            continue
        outcome = upsert(
            model,
            {"slug": spec["slug"]},
            {
                **values(spec),
                "section": sections[spec["section"]],
                "source_path": relative(path),
            },
        )
        row = model.objects.get(slug=spec["slug"])
        wanted = {lessons[s].pk for s in spec.get("lessons") or []}
        if set(row.lessons.values_list("pk", flat=True)) != wanted:
            row.lessons.set(wanted)
            outcome = "updated" if outcome == "unchanged" else outcome
        note(label, relative(path), outcome)
    if problems:
        raise ContentError(problems)
