"""An authored exercise's content file as the grader gets it, for tests.

The server builds the declaration from the row (grader.authored), its
mistakes' messages from the diagnoses table; tests that grade content files
without a database build it here from the file, with the summaries of
content/diagnoses.yaml, so they grade what the server grades.
"""

from __future__ import annotations

import functools

import yaml
from grading_engine import authored

from tests.conftest import PROJECT_ROOT


@functools.cache
def _summaries() -> dict[str, str]:
    text = (PROJECT_ROOT / "content" / "diagnoses.yaml").read_text(encoding="utf-8")
    return {d["slug"]: d.get("summary", "") for d in yaml.safe_load(text)["diagnoses"]}


def diagnoses_of(spec: dict) -> None:
    """The rows of the diagnoses an exercise's wrong solutions name, with
    their summaries, for tests that load no content tree."""
    from quiz.content.models import Diagnosis

    for wrong in spec.get("wrong_solutions") or []:
        slug = wrong["diagnosis"]
        Diagnosis.objects.create(slug=slug, summary=_summaries()[slug])


def declaration_of(spec: dict) -> authored.Declaration | None:
    """None for a built-in harness; else the parsed declaration."""
    if spec.get("harness") != authored.HARNESS:
        return None
    mistakes = [
        {
            "diagnosis": wrong.get("diagnosis"),
            "message": wrong.get("message")
            or _summaries().get(wrong.get("diagnosis"), ""),
            "code": wrong.get("code"),
        }
        for wrong in spec.get("wrong_solutions") or []
    ]
    return authored.parse(
        spec["declaration"],
        entry_point=spec["entry_point"],
        reference=spec["solution"],
        mistakes=mistakes,
    )
