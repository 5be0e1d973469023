"""`course check`: the exercise's visible cases, graded here by the server's checks.

The learner's code runs in a child process (course.forkrunner: forked from
a process with torch loaded, its own session, scrubbed environment, a
wall-clock kill),
not in the server's sandbox: this is the learner's own machine. The checks
and messages are the engine's, so they are the ones the server would give
for the same cases. What they compare against comes from the server: the
exercise's local-check bundle holds its visible cases and the values the
server's reference computed for them (grading_engine.expected), since the
engine installed here (the learner edition) has no reference. Hidden cases
never reach the client; they run on submit.
"""

from __future__ import annotations

import hashlib

from course import store
from course.errors import CourseError

# The server's budget is measured on its own hardware; a laptop gets slack.
LOCAL_TIMEOUT_FACTOR = 3.0
LOCAL_MIN_TIMEOUT = 30.0


def local_timeout(exercise: dict) -> float:
    budget = exercise.get("time_budget") or {}
    seconds = budget.get("seconds") if isinstance(budget, dict) else None
    if not isinstance(seconds, int | float) or seconds <= 0:
        return LOCAL_MIN_TIMEOUT * 2
    return max(LOCAL_MIN_TIMEOUT, seconds * LOCAL_TIMEOUT_FACTOR)


def _wanted(exercise: dict) -> str | None:
    """The SHA-256 of the bundle the server offers for `exercise`, if any."""
    offered = exercise.get("local_check")
    digest = offered.get("sha256") if isinstance(offered, dict) else None
    return digest if isinstance(digest, str) else None


def bundle_current(exercise: dict) -> bool:
    """Is the bundle the server offered for `exercise` saved here, intact?"""
    wanted = _wanted(exercise)
    if wanted is None:
        return False
    blob = store.local_check_load(exercise["slug"])
    return blob is not None and hashlib.sha256(blob).hexdigest() == wanted


def fetch_bundle(api, exercise: dict) -> None:
    """Download and keep the exercise's local-check bundle (when offered)."""
    slug = exercise["slug"]
    wanted = _wanted(exercise)
    if wanted is None or bundle_current(exercise):
        return
    response = api.call("GET", f"/api/v1/exercises/{slug}/local-check/")
    blob = response.content
    if hashlib.sha256(blob).hexdigest() != wanted:
        raise CourseError(
            f"the local check of {slug} arrived damaged; run `course get {slug}` again"
        )
    store.local_check_save(slug, blob)


def _bundle(exercise: dict):
    """The saved bundle of `exercise`, decoded; CourseError if it cannot be had."""
    from grading_engine.expected import decode

    slug = exercise.get("slug")
    if _wanted(exercise) is None:
        raise CourseError(
            f"the server offers no local check of {slug} (its operator has not "
            "built it: `make client`); `course submit` grades it there"
        )
    if not bundle_current(exercise):
        raise CourseError(
            f"the local check of {slug} is missing or out of date: run "
            f"`course get {slug}` while online"
        )
    try:
        bundle = decode(store.local_check_load(slug))
    except ValueError as exc:
        raise CourseError(f"the local check of {slug} is unreadable: {exc}") from None
    if bundle.harness != exercise.get("harness"):
        raise CourseError(
            f"the local check of {slug} is for another harness: run "
            f"`course get {slug}` again"
        )
    return bundle


def _declaration(exercise: dict, bundle):
    """An authored exercise's public declaration, from its bundle (None for
    a built-in one): what its checks compare; the values come shipped."""
    from grading_engine import authored

    if exercise.get("harness") != authored.HARNESS:
        return None
    try:
        return authored.parse(
            bundle.declaration,
            entry_point=exercise.get("entry_point"),
            reference=None,
        )
    except authored.DeclarationError as exc:
        raise CourseError(
            f"the local check of {exercise.get('slug')} is unreadable ({exc}): "
            f"run `course get {exercise.get('slug')}` again"
        ) from None


def check(exercise: dict, code: str) -> dict:
    """The engine's verdict on the visible cases, as the API's JSON shape."""
    from grading_engine.grading import grade

    from course.forkrunner import runner

    bundle = _bundle(exercise)
    options = exercise.get("check_options")
    try:
        verdict = grade(
            declaration=_declaration(exercise, bundle),
            harness=exercise["harness"],
            code=code,
            entry_point=exercise["entry_point"],
            runner=runner(),
            timeout=local_timeout(exercise),
            options=options if isinstance(options, dict) else None,
            visible_only=True,
            cases=bundle.cases,
            expected=bundle,
        )
    except RuntimeError as exc:  # the local fork server died (see forkrunner)
        raise CourseError(f"{exc}; run the check again") from None
    except LookupError:
        raise CourseError(
            f"this grading engine cannot check {exercise.get('slug')}: "
            "install the server's version (see `course get`)"
        ) from None
    return verdict.to_dict()
