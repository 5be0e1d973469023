"""Authored exercises on the server: the row's declaration as the engine grades it.

An exercise whose harness is `authored` is graded from its `declaration`
(grading_engine.authored): the solution is its reference and each wrong
solution a known mistake, named by its diagnosis with its own message or,
without one, the diagnosis's summary from content/diagnoses.yaml. Every
path that grades or checks an exercise (the worker, verification, the
admin's form, the content loader) gets the declaration from here.
"""

from __future__ import annotations

from grading_engine import authored as engine
from grading_engine.authored import Declaration, DeclarationError

from quiz.content.models import Diagnosis

AUTHORED = engine.HARNESS
# How a declaration's diagnoses are read: an author's save refuses one the
# table lacks; a grade uses the summaries it finds (it was checked when
# saved, and a grade must not fail on it); a content file read alone has no
# database (tests/grader/test_diagnoses.py checks the files' diagnoses).
REQUIRED, USED, UNREAD = "required", "used", "unread"
# The form field a declaration problem belongs to, by the path's first part.
_FIELDS = {
    "solution": "solution",
    "entry_point": "entry_point",
    "wrong_solutions": "wrong_solutions",
}


def declaration_parse(
    *,
    declaration,
    entry_point: str,
    solution: str,
    wrong_solutions,
    diagnoses: str = REQUIRED,
) -> Declaration:
    """The declaration the engine grades with; DeclarationError naming the
    field at fault. `diagnoses` is REQUIRED, USED or UNREAD (above)."""
    wrong = wrong_solutions if isinstance(wrong_solutions, list) else []
    slugs = [item.get("diagnosis") for item in wrong if isinstance(item, dict)]
    summaries = {}
    if diagnoses != UNREAD:
        named = [slug for slug in slugs if isinstance(slug, str)]
        summaries = dict(
            Diagnosis.objects.filter(slug__in=named).values_list("slug", "summary")
        )
    mistakes = []
    for number, item in enumerate(wrong):
        if not isinstance(item, dict):
            mistakes.append(item)  # the engine says why
            continue
        diagnosis = item.get("diagnosis")
        if diagnoses == REQUIRED and isinstance(diagnosis, str):
            if diagnosis not in summaries:
                raise DeclarationError(
                    f"wrong_solutions[{number}].diagnosis",
                    f"no diagnosis {diagnosis!r} in content/diagnoses.yaml: use "
                    "one of its slugs or add it there",
                )
        message = item.get("message") or summaries.get(diagnosis, "")
        mistakes.append(
            {"diagnosis": diagnosis, "message": message, "code": item.get("code")}
        )
    return engine.parse(
        declaration, entry_point=entry_point, reference=solution, mistakes=mistakes
    )


def exercise_declaration(exercise) -> Declaration | None:
    """None for a built-in exercise; for an authored one, its declaration
    (DeclarationError if it cannot be graded)."""
    if exercise.harness != AUTHORED:
        return None
    return declaration_parse(
        declaration=exercise.declaration,
        entry_point=exercise.entry_point,
        solution=exercise.solution,
        wrong_solutions=exercise.wrong_solutions,
        diagnoses=USED,
    )


def declaration_problems(
    *,
    harness: str,
    declaration,
    entry_point: str,
    solution: str,
    wrong_solutions,
    diagnoses: str = REQUIRED,
) -> list[tuple[str, str]]:
    """(form field, message) for each reason the declaration cannot go with
    the rest of the exercise; empty when it can."""
    if harness != AUTHORED:
        if declaration:
            return [
                (
                    "declaration",
                    f"only harness {AUTHORED!r} reads a declaration: clear it, "
                    f"or set the harness to {AUTHORED!r}",
                )
            ]
        return []
    try:
        declaration_parse(
            declaration=declaration,
            entry_point=entry_point,
            solution=solution,
            wrong_solutions=wrong_solutions,
            diagnoses=diagnoses,
        )
    except DeclarationError as exc:
        where = exc.field.split("[")[0].split(".")[0]
        return [(_FIELDS.get(where, "declaration"), str(exc))]
    return []


def author_runs(runner, timeout: float = 60.0):
    """`run(job)` for the author's code on `runner` (a sandbox), as a
    grade runs its jobs: what grading_engine.authored's builders call."""
    from grading_engine.reference.tokenizer import default_cache_dir

    def run(job: dict):
        job = {**job, "tiktoken_cache_dir": str(default_cache_dir())}
        return runner.run(job, timeout=timeout)

    return run
