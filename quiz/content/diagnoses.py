"""Diagnoses: which lessons teach the idea behind each named mistake.

content/diagnoses.yaml is the seed source; `diagnosis_load` upserts it so a
failed exercise check can schedule the right lessons' follow-ups for review.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml
from django.db import transaction

from quiz.content.models import Diagnosis, Lesson

SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
SUMMARY_MAX = Diagnosis._meta.get_field("summary").max_length


class DiagnosesInvalid(ValueError):
    """The diagnoses file cannot be loaded; the message lists every problem."""


@dataclass(frozen=True)
class DiagnosisRecord:
    slug: str
    summary: str
    lessons: tuple[str, ...]
    line: int


def _records(path: Path, problems: list[str]) -> list[DiagnosisRecord]:
    """Parse and check the file's shape, noting problems as `file:line: reason`."""
    try:
        text = path.read_text(encoding="utf-8")
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        problems.append(f"{path}: cannot read: {exc}")
        return []
    where = f"{path}:{root.start_mark.line + 1}" if root else f"{path}:1"
    data = yaml.safe_load(text) if root else None
    if not isinstance(data, dict) or not isinstance(data.get("diagnoses"), list):
        problems.append(f"{where}: expected a mapping with a `diagnoses:` list")
        return []
    items_node = next(v for k, v in root.value if k.value == "diagnoses")
    records, seen = [], {}
    for node, item in zip(items_node.value, data["diagnoses"], strict=True):
        line = node.start_mark.line + 1
        problem = _problem(item, seen)
        if problem:
            problems.append(f"{path}:{line}: {problem}")
            continue
        seen[item["slug"]] = line
        records.append(
            DiagnosisRecord(
                slug=item["slug"],
                summary=item.get("summary", "").strip(),
                lessons=tuple(item.get("lessons", [])),
                line=line,
            )
        )
    return records


def _problem(item, seen: dict[str, int]) -> str | None:
    """What is wrong with one entry of the list, or None."""
    if not isinstance(item, dict):
        return "each diagnosis is a mapping with slug, summary and lessons"
    unknown = sorted(str(key) for key in set(item) - {"slug", "summary", "lessons"})
    if unknown:
        return f"unknown keys: {', '.join(unknown)}"
    slug = item.get("slug")
    if not isinstance(slug, str) or not SLUG.match(slug):
        return f"slug {slug!r} is not a lowercase-hyphenated slug"
    if slug in seen:
        return f"diagnosis {slug!r} is listed twice (first at line {seen[slug]})"
    summary = item.get("summary", "")
    if not isinstance(summary, str) or len(summary) > SUMMARY_MAX:
        return f"{slug}: summary must be text of at most {SUMMARY_MAX} characters"
    lessons = item.get("lessons", [])
    if not isinstance(lessons, list) or not all(isinstance(s, str) for s in lessons):
        return f"{slug}: lessons must be a list of lesson slugs"
    return None


def diagnosis_load(*, path: Path) -> int:
    """Upsert every diagnosis in `path` with its lessons; return how many.

    All or nothing: the whole file is checked (shape, duplicate slugs, lesson
    slugs that exist) before one transaction writes it, so a typo never leaves
    half the mapping loaded. Rows missing from the file are left alone, like
    lessons: an admin may have added them on purpose.
    """
    problems: list[str] = []
    records = _records(Path(path), problems)
    wanted = {slug for record in records for slug in record.lessons}
    lessons = {lesson.slug: lesson for lesson in Lesson.objects.filter(slug__in=wanted)}
    for record in records:
        for slug in record.lessons:
            if slug not in lessons:
                problems.append(
                    f"{path}:{record.line}: {record.slug}: unknown lesson {slug!r} "
                    "(no lesson with that slug is loaded; see content/*/*.md)"
                )
    if problems:
        raise DiagnosesInvalid("\n".join(problems))
    with transaction.atomic():
        for record in records:
            diagnosis, _ = Diagnosis.objects.update_or_create(
                slug=record.slug, defaults={"summary": record.summary}
            )
            diagnosis.lessons.set([lessons[slug] for slug in record.lessons])
    return len(records)


def diagnosis_list() -> list[Diagnosis]:
    """Every diagnosis with its lessons, in two queries."""
    return list(Diagnosis.objects.prefetch_related("lessons"))


def diagnoses_for(slugs) -> dict[str, Diagnosis]:
    """The Diagnosis rows for `slugs`, with their lessons, in two queries."""
    slugs = {s for s in slugs if s}
    if not slugs:
        return {}
    rows = Diagnosis.objects.filter(slug__in=slugs).prefetch_related("lessons")
    return {row.slug: row for row in rows}


def diagnosis_lessons(row: Diagnosis | None, *, fallback) -> list[Lesson]:
    """The lessons that teach a diagnosis; `fallback` (the exercise's own
    lesson, or None) when it has no row or no lessons. Pages and review
    scheduling share this rule."""
    lessons = list(row.lessons.all()) if row else []
    if not lessons and fallback is not None:
        lessons = [fallback]
    return lessons
