"""Exercise versions: an admin's save is verified before learners see it.

The Exercise row is always the live version: what learners, the API, the
lessons and the grader read. An admin save that changes what is graded
becomes an ExerciseVersion (a draft) instead; a background task grades its
reference solution (it must pass) and its known wrong solutions (each must
fail), and only then copies it onto the row. A draft that fails leaves the
live version as it was. An exercise with no verified version yet (version 0)
stays unpublished. Design notes: docs/exercise-versions.md.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import dataclass

from django.contrib import messages
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from grader.authored import AUTHORED
from grader.models import Exercise, ExerciseVersion
from grader.verify import exercise_is_verified, solution_grade, verification_apply
from quiz.core.audit import Action, audit_changes, audit_record, audit_snapshot

log = logging.getLogger(__name__)

# What a version holds; slug and lesson are where the exercise sits, not what
# it is, and save at once.
VERSIONED_FIELDS = (
    "title",
    "harness",
    "entry_point",
    "signature",
    "prompt",
    "starter",
    "solution",
    "wrong_solutions",
    "right_solutions",
    "declaration",
    "options",
    "published",
)
PENDING = (ExerciseVersion.Status.QUEUED, ExerciseVersion.Status.RUNNING)
# A verification takes seconds on a worker (a few grades on a warm pool); one
# still pending after this long was most likely never picked up (no worker
# running) or lost with a dead worker, and the admin page says so.
STALE_AFTER = dt.timedelta(minutes=10)
OPEN = (*PENDING, ExerciseVersion.Status.FAILED)


@dataclass(frozen=True)
class SaveOutcome:
    """What an admin save did, as the one message the admin shows."""

    level: int
    message: str
    version: ExerciseVersion | None = None

    @property
    def verifying(self) -> bool:
        return self.version is not None and self.version.status in PENDING


def exercise_content(exercise: Exercise) -> dict:
    return {field: getattr(exercise, field) for field in VERSIONED_FIELDS}


def exercise_draft(*, exercise: Exercise) -> ExerciseVersion | None:
    """The newest save that is not live yet (verifying or failed), if any."""
    return (
        exercise.versions.filter(number__gt=exercise.version, status__in=OPEN)
        .order_by("-number")
        .first()
    )


def exercise_for_editing(exercise: Exercise) -> Exercise:
    """`exercise` with its newest unverified save's content, for the admin form.

    An author fixing a failed save edits what they saved, not the live
    version; the row learners read is not changed.
    """
    draft = exercise_draft(exercise=exercise)
    if draft is not None:
        for field, value in draft.content.items():
            if field in VERSIONED_FIELDS:
                setattr(exercise, field, value)
    return exercise


def _candidate(live: Exercise, content: dict) -> Exercise:
    """An unsaved copy of the live row with `content` in place: what to grade."""
    candidate = Exercise(
        **{
            field.attname: getattr(live, field.attname)
            for field in Exercise._meta.concrete_fields
        }
    )
    for field, value in content.items():
        setattr(candidate, field, value)
    return candidate


def _needs_grading(live: Exercise, content: dict) -> bool:
    """Whether `content` must be graded before it may go live.

    Not when only words changed (title, prompt, starter...) on a version
    whose stored verification still describes what is graded; not when the
    only change is unpublishing, which is always safe.
    """
    changed = {f for f in VERSIONED_FIELDS if getattr(live, f) != content[f]}
    if changed <= {"published"} and (live.version > 0 or not content["published"]):
        return False
    if live.version == 0:
        return True
    if content["wrong_solutions"] != live.wrong_solutions:
        return True
    if content["right_solutions"] != live.right_solutions:
        return True
    return not exercise_is_verified(exercise=_candidate(live, content))


def exercise_save(
    *, exercise: Exercise, actor, creating: bool, send: Callable[[int], None]
) -> SaveOutcome:
    """Save an admin's edit of `exercise` (an unsaved instance holding the form).

    Slug and lesson are saved at once. The versioned fields go live at once
    when nothing graded changed; otherwise they become a draft version that
    `send(version_id)` verifies in the background (after the commit), and
    learners keep the live version meanwhile. A new exercise stays
    unpublished until its first version verifies.
    """
    content = exercise_content(exercise)
    with transaction.atomic():
        if creating:
            exercise.version = 0
            exercise.published = False
            exercise.save()
            live = exercise
        else:
            live = Exercise.objects.select_for_update().get(pk=exercise.pk)
            for field in VERSIONED_FIELDS:  # the row keeps the live version
                setattr(exercise, field, getattr(live, field))
            exercise.save()
        _supersede(exercise)
        if not creating and content == exercise_content(live):
            return SaveOutcome(
                messages.SUCCESS,
                f"{exercise.slug}: saved; version {exercise.version} stays live.",
            )
        number = _next_number(exercise)
        version = ExerciseVersion.objects.create(
            exercise=exercise,
            number=number,
            content=content,
            total=1
            + len(content["wrong_solutions"] or [])
            + len(content["right_solutions"] or []),
            created_by=actor if getattr(actor, "pk", None) else None,
        )
        if not creating and not _needs_grading(live, content):
            _promote(version, result=None, actor=actor)
            return SaveOutcome(
                messages.SUCCESS,
                f"{exercise.slug}: version {number} is live (nothing that is "
                "graded changed, so it needed no new verification).",
                version,
            )
        transaction.on_commit(lambda: send(version.pk))
    wrongs = len(content["wrong_solutions"] or [])
    rights = len(content["right_solutions"] or [])
    if creating:
        keeps = "It stays unpublished until this version passes."
    else:
        keeps = f"Learners keep version {exercise.version} until it passes."
    return SaveOutcome(
        messages.INFO,
        f"{exercise.slug}: saved as version {number}; verifying it in the "
        f"background (its reference solution and {_count(rights, 'right variant')} "
        f"must pass, {_count(wrongs, 'known wrong solution')} must fail). {keeps}",
        version,
    )


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _next_number(exercise: Exercise) -> int:
    highest = exercise.versions.aggregate(top=Max("number"))["top"] or 0
    return max(highest, exercise.version) + 1


def _supersede(exercise: Exercise) -> None:
    """Drafts still waiting will never go live once a newer save exists.

    Failed ones keep their status: the history says why they never went live.
    """
    exercise.versions.filter(status__in=PENDING).update(
        status=ExerciseVersion.Status.SUPERSEDED, finished_at=timezone.now()
    )


def exercise_version_verify(*, version_id: int, runner=None) -> str | None:
    """Grade a draft version and promote it if it passes; its final status.

    Returns None when the version is not queued (already taken, superseded).
    Progress (done of total grades, the current step) is saved as it goes, so
    the admin page can show it.
    """
    claimed = ExerciseVersion.objects.filter(
        pk=version_id, status=ExerciseVersion.Status.QUEUED
    ).update(status=ExerciseVersion.Status.RUNNING, step="reference solution")
    if not claimed:
        return None
    version = ExerciseVersion.objects.select_related("exercise").get(pk=version_id)
    candidate = _candidate(version.exercise, version.content)
    result = solution_grade(exercise=candidate, runner=runner)
    problems = [
        {**item, "name": f"reference solution: {item['name']}"}
        for item in result.get("failed", [])
    ]
    if result["status"] != "passed" and not problems:
        problems.append({"name": "reference solution", "message": result["status"]})
    if not problems and candidate.harness == AUTHORED:
        _progress(version, 1, problems, step="hidden draws")
        problems += _hidden_draws(candidate, runner)
    _progress(version, 1, problems)
    wrong = version.content.get("wrong_solutions") or []
    if not problems:
        for done, item in enumerate(wrong, start=2):
            _progress(
                version, done - 1, problems, step=f"wrong solution {item['name']}"
            )
            graded = solution_grade(
                exercise=candidate, runner=runner, code=item["code"]
            )
            if graded["status"] == "passed":
                problems.append(
                    {
                        "name": f"wrong solution {item['name']}",
                        "message": "passes every check, so the checks cannot "
                        "tell this mistake from a right answer",
                    }
                )
            elif unnamed := _not_named(candidate, item, graded):
                problems.append(
                    {"name": f"wrong solution {item['name']}", "message": unnamed}
                )
            _progress(version, done, problems)
        right = version.content.get("right_solutions") or []
        for done, item in enumerate(right, start=2 + len(wrong)):
            _progress(version, done - 1, problems, step=f"right variant {item['name']}")
            graded = solution_grade(
                exercise=candidate, runner=runner, code=item["code"]
            )
            if graded["status"] != "passed":
                said = "; ".join(
                    f"{f['name']}: {f['message']}" for f in graded.get("failed", [])[:2]
                )
                problems.append(
                    {
                        "name": f"right variant {item['name']}",
                        "message": "fails, so the checks refuse an answer the "
                        f"prompt allows: {said or graded['status']}",
                        **_values(graded),
                    }
                )
            _progress(version, done, problems)
    if problems:
        return _fail(version, result, problems)
    with transaction.atomic():
        promoted = _promote(version, result=result, actor=version.created_by)
    if promoted and version.content.get("harness") == AUTHORED:
        _local_check(version.exercise_id, runner)
    return version.status if promoted else ExerciseVersion.Status.SUPERSEDED


def _local_check(exercise_id: int, runner) -> None:
    """An authored exercise's `course check` bundle, built with the runner
    that verified it (none: a cold sandbox, as verifying used); a failure
    here only leaves it to be built on demand."""
    from grader.local_checks import local_check_build
    from grader.process_runner import runner_get

    try:
        runner = runner if runner is not None else runner_get("cold")
        local_check_build(exercise_id=exercise_id, runner=runner)
    except Exception:  # noqa: BLE001 - the version is live either way
        log.warning("local check of exercise %s not built", exercise_id, exc_info=True)


def _hidden_draws(exercise: Exercise, runner) -> list[dict]:
    """An authored reference must answer the hidden cases of every draw, not
    only the one the grade above drew: a size range it cannot take (k above
    the vocabulary, say) would make some learners' grades errors. One job
    holds many draws (grading_engine.authored.failed_draws)."""
    from grading_engine.authored import AuthoredError, failed_draws

    from grader.authored import author_runs, exercise_declaration
    from grader.process_runner import runner_get

    try:
        runner = runner if runner is not None else runner_get("cold")
        failed = failed_draws(exercise_declaration(exercise), author_runs(runner))
    except AuthoredError as exc:
        failed = [str(exc)]
    except Exception as exc:  # noqa: BLE001 - told to the author, not raised
        failed = [f"the hidden draws could not be tried: {type(exc).__name__}: {exc}"]
    return [
        {"name": "reference solution: hidden draws", "message": line[:500]}
        for line in failed[:5]
    ]


def _not_named(exercise: Exercise, item: dict, graded: dict) -> str:
    """Why an authored exercise's wrong solution is not named as its own
    mistake ("" when it is): its diagnosis is what it is there to teach.
    Each wrong solution is one of the exercise's known mistakes, so this
    fails when another mistake gives the same outputs (the first is named)
    or the outputs are too close to the reference's to be told apart.
    (A built-in harness names its mistakes in code, tested per exercise.)"""
    wanted = item.get("diagnosis")
    named = graded.get("diagnoses", [])
    if exercise.harness != AUTHORED or not wanted or wanted in named:
        return ""
    said = ", ".join(named) or "no mistake"
    detail = "; ".join(f["message"] for f in graded.get("failed", [])[:2])
    return (
        f"fails, but its checks name {said}, not {wanted}: make its output "
        f"differ from the reference's where this mistake matters ({detail})"
    )


def _values(graded: dict) -> dict:
    """The first failed check's expected and got values, where it has them."""
    first = (graded.get("failed") or [{}])[0]
    return {key: first[key] for key in ("expected", "got") if key in first}


def _progress(version, done: int, problems: list, step: str = "") -> None:
    ExerciseVersion.objects.filter(pk=version.pk, status__in=PENDING).update(
        done=done, step=step, verification={"failed": problems}
    )


def _fail(version: ExerciseVersion, result: dict, problems: list) -> str:
    ExerciseVersion.objects.filter(pk=version.pk, status__in=PENDING).update(
        status=ExerciseVersion.Status.FAILED,
        step="",
        finished_at=timezone.now(),
        verification={**result, "failed": problems, "failed_count": len(problems)},
    )
    log.info("exercise %s version %s failed", version.exercise_id, version.number)
    return ExerciseVersion.Status.FAILED


def _promote(version: ExerciseVersion, *, result: dict | None, actor) -> bool:
    """Copy a verified version onto the live row, unless a newer one is there.

    `result` is the new verification; None keeps the row's (nothing graded
    changed). Runs inside the caller's transaction.
    """
    live = Exercise.objects.select_for_update().get(pk=version.exercise_id)
    current = ExerciseVersion.objects.select_for_update().get(pk=version.pk)
    if current.status == ExerciseVersion.Status.SUPERSEDED or (
        live.version >= version.number
    ):
        return False
    before = audit_snapshot(live)
    for field, value in version.content.items():
        setattr(live, field, value)
    if result is not None:
        verification_apply(exercise=live, result=result)
    live.version = version.number
    live.save()
    changes = audit_changes(old=before, new=audit_snapshot(live))
    if changes:
        audit_record(actor=actor, action=Action.UPDATE, instance=live, changes=changes)
    version.status = ExerciseVersion.Status.LIVE
    version.done = version.total
    version.step = ""
    version.finished_at = timezone.now()
    if result is not None:
        version.verification = result
    version.save()
    return True


def exercise_version_state(*, exercise: Exercise) -> dict:
    """The live version and the newest draft's progress, as plain data."""
    draft = (
        exercise.versions.filter(number__gt=exercise.version)
        .exclude(status=ExerciseVersion.Status.SUPERSEDED)
        .order_by("-number")
        .first()
    )
    state = {
        "live_version": exercise.version,
        "published": exercise.published,
        "draft": None,
    }
    if draft is not None:
        state["draft"] = {
            "version": draft.number,
            "status": draft.status,
            "done": draft.done,
            "total": draft.total,
            "step": draft.step,
            "failed": (draft.verification or {}).get("failed", []),
            "terminal": draft.status not in PENDING,
            "stale": draft.status in PENDING
            and timezone.now() - draft.created_at > STALE_AFTER,
        }
    return state
