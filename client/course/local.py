"""`course check`: the exercise's visible cases, graded here by the server's engine.

The learner's code runs in a child process (course.forkrunner: forked from
a process with torch loaded, its own session, scrubbed environment, a
wall-clock kill),
not in the server's sandbox: this is the learner's own machine. The checks
and messages are the engine's, so they are the ones the server would give
for the same cases. Hidden cases never reach the client; they run on submit.
"""

from __future__ import annotations

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


def check(exercise: dict, code: str) -> dict:
    """The engine's verdict on the visible cases, as the API's JSON shape."""
    from grading_engine.grading import grade

    from course.forkrunner import runner

    options = exercise.get("check_options")
    try:
        verdict = grade(
            harness=exercise["harness"],
            code=code,
            entry_point=exercise["entry_point"],
            runner=runner(),
            timeout=local_timeout(exercise),
            options=options if isinstance(options, dict) else None,
            visible_only=True,
        )
    except RuntimeError as exc:  # the local fork server died (see forkrunner)
        raise CourseError(f"{exc}; run the check again") from None
    except LookupError:
        raise CourseError(
            f"this grading engine cannot check {exercise.get('slug')}: "
            "install the server's version (see `course get`)"
        ) from None
    return verdict.to_dict()
