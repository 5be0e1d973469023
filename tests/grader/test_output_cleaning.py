"""Learner output with NUL or lone surrogates is saved, not re-graded forever.

PostgreSQL text and jsonb refuse U+0000 and UTF-8 has no lone surrogates;
before the cleaning, such a verdict failed to save, the row stayed `running`
and ended "crashed twice". These grade for real (cold sandbox) and save to
PostgreSQL through submission_grading.submission_grade, as a worker does.
"""

from __future__ import annotations

import pytest

from grader import services, submission_grading
from grader.models import Submission
from quiz.core.db_text import REPLACEMENT, db_text_clean

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

PRINTS = (
    "import sys\n"
    'print("a\\x00b")\n'
    'print("c\\udcffd")  # a lone surrogate; stdout escapes it to a raw byte\n'
    'sys.stderr.write("warn\\x00ing\\n")\n'
    "def block_param_count(n_embd):\n"
    "    return 12 * n_embd**2 + 13 * n_embd\n"
)
RAISES = (
    'print("before\\x00")\n'
    "def block_param_count(n_embd):\n"
    '    raise ValueError("bad\\x00value")\n'
)


def grade(learner, exercise, code) -> Submission:
    submission = Submission.objects.create(
        user=learner, exercise=exercise, code=code, seed=3, status="queued"
    )
    submission_grading.submission_grade(submission_id=str(submission.pk))
    submission.refresh_from_db()
    return submission


def test_a_nul_and_a_lone_surrogate_in_output_are_saved_replaced(
    learner, block_exercise, settings
):
    settings.GRADER_RUNNER = "cold"
    row = grade(learner, block_exercise, PRINTS)
    assert row.status == "passed" and row.grading_attempts == 1
    assert row.stdout == f"a{REPLACEMENT}b\nc{REPLACEMENT}d\n"
    assert f"warn{REPLACEMENT}ing" in row.stderr and "\x00" not in row.stderr


def test_a_nul_in_a_check_message_is_saved_replaced(
    client, learner, block_exercise, settings
):
    settings.GRADER_RUNNER = "cold"
    row = grade(learner, block_exercise, RAISES)
    assert row.is_terminal and row.grading_attempts == 1
    messages = " ".join(check["message"] for check in row.checks)
    assert f"ValueError: bad{REPLACEMENT}value" in messages
    assert "\x00" not in messages
    assert row.stdout == f"before{REPLACEMENT}\n"
    client.force_login(learner)
    page = client.get(f"/submissions/{row.pk}/").content.decode()
    assert f"before{REPLACEMENT}" in page


def test_cleaning_reaches_every_string_in_json():
    dirty = {
        "k\x00": ["\ud800x", ("y\udfff", 1, None)],
        "n": {"deep": [{"m": "\x00"}]},
    }
    assert db_text_clean(dirty) == {
        f"k{REPLACEMENT}": [f"{REPLACEMENT}x", (f"y{REPLACEMENT}", 1, None)],
        "n": {"deep": [{"m": REPLACEMENT}]},
    }
    assert db_text_clean("fine ✓ \U0001f600") == "fine ✓ \U0001f600"


def test_a_lone_surrogate_in_a_verdict_saves_on_postgresql(
    learner, block_exercise, monkeypatch
):
    """The JSON paths can carry lone surrogates ("\\ud800" parses to one)."""
    from grading_engine.checks.result import CheckResult
    from grading_engine.grading import Verdict

    def fake_grade(**kwargs):
        return Verdict(
            "failed",
            0.0,
            [CheckResult("d=64", False, "got '\ud800' and \x00")],
            stdout="out\ud800",
            stderr="err\udfff",
        )

    monkeypatch.setattr(submission_grading, "exercise_grade", fake_grade)
    row = grade(learner, block_exercise, "x = 1")
    assert row.status == "failed"
    assert row.checks[0]["message"] == f"got '{REPLACEMENT}' and {REPLACEMENT}"
    assert (row.stdout, row.stderr) == (f"out{REPLACEMENT}", f"err{REPLACEMENT}")


def test_the_service_refuses_code_postgresql_could_not_store(learner, block_exercise):
    """The API's serializer refuses surrogates too; the service guards the rest."""
    with pytest.raises(services.SubmissionRejected, match="lone UTF-16 surrogate"):
        services.submission_create(
            user=learner, exercise=block_exercise, code="x = '\ud800'"
        )
    assert not Submission.objects.exists()
