"""A submission in Gradescope's results.json shape, for the API."""

from __future__ import annotations

from grader.models import Submission


def submission_gradescope(submission: Submission) -> dict:
    """The submission in Gradescope's results.json shape (one point per check)."""
    tests = [
        {
            "name": check["name"],
            "score": 1.0 if check["passed"] else 0.0,
            "max_score": 1.0,
            "status": "passed" if check["passed"] else "failed",
            "output": check.get("message", ""),
            "visibility": "after_published" if check.get("hidden") else "visible",
        }
        for check in submission.checks
    ]
    output = f"{submission.exercise.slug}: {submission.status}"
    if submission.stdout:
        output += f"\n\nYour code printed:\n{submission.stdout}"
    return {
        "score": sum(t["score"] for t in tests),
        "execution_time": round(submission.grade_ms / 1000, 3)
        if submission.grade_ms
        else None,
        "output": output,
        "tests": tests,
    }
