"""Verification: an exercise's reference solution must pass its own checks."""

from __future__ import annotations

from io import StringIO

import pytest

from grader.models import Exercise
from grader.verify import (
    exercise_fingerprint,
    exercise_is_verified,
    exercise_options_problems,
    exercise_verify,
    harness_option_keys,
)

pytestmark = pytest.mark.django_db

SOLUTION = (
    "def kv_cache_bytes(n_layer, n_embd, seq_len, batch_size, bytes_per_element):\n"
    "    return 2 * n_layer * batch_size * seq_len * n_embd * bytes_per_element\n"
)
KEYS_ONLY = (
    "def kv_cache_bytes(n_layer, n_embd, seq_len, batch_size, bytes_per_element):\n"
    "    return n_layer * batch_size * seq_len * n_embd * bytes_per_element\n"
)


def kv_exercise(solution: str = SOLUTION, **fields) -> Exercise:
    values = {
        "slug": "kv-cache-bytes",
        "title": "Size the KV cache",
        "harness": "kv-cache-bytes",
        "entry_point": "kv_cache_bytes",
        "signature": "kv_cache_bytes(...) -> int",
        "prompt": "Count the bytes.",
        "starter": "def kv_cache_bytes(*args):\n    ...\n",
        "solution": solution,
        "published": True,
        **fields,
    }
    return Exercise.objects.create(**values)


@pytest.mark.slow
def test_a_passing_solution_is_verified_and_stays_published():
    exercise = kv_exercise()
    outcome = exercise_verify(exercise=exercise)
    assert outcome.passed, outcome.verification
    exercise.refresh_from_db()
    assert exercise.published is True
    assert exercise.verified_at is not None
    assert exercise.verification["status"] == "passed"
    assert exercise.verification["checks"] >= 7
    assert exercise.verification["failed"] == []
    assert exercise_is_verified(exercise=exercise)


@pytest.mark.slow
def test_a_failing_solution_unpublishes_and_names_the_failed_checks():
    exercise = kv_exercise(KEYS_ONLY)
    outcome = exercise_verify(exercise=exercise)
    assert not outcome.passed
    exercise.refresh_from_db()
    assert exercise.published is False
    assert exercise.verified_at is None
    assert exercise.verification["status"] == "failed"
    names = [item["name"] for item in exercise.verification["failed"]]
    assert "gpt2 fp32, one sequence of 1,024: bytes" in names
    assert "gpt2 fp32, one sequence of 1,024: bytes" in outcome.summary()
    assert not exercise_is_verified(exercise=exercise)


def test_an_unknown_harness_fails_without_running_anything():
    exercise = kv_exercise(harness="no-such-harness")
    outcome = exercise_verify(exercise=exercise, runner=object())
    assert not outcome.passed
    assert outcome.verification["status"] == "error"
    assert "no grading harness named 'no-such-harness'" in outcome.summary()
    exercise.refresh_from_db()
    assert exercise.published is False


def test_a_stored_verification_goes_stale_when_the_solution_changes():
    exercise = kv_exercise()
    exercise.verification = {
        "status": "passed",
        "fingerprint": exercise_fingerprint(exercise=exercise),
    }
    assert exercise_is_verified(exercise=exercise)
    exercise.solution += "\n# edited\n"
    assert not exercise_is_verified(exercise=exercise)
    exercise.solution = SOLUTION
    exercise.options = {"rtol": 1e-3}
    assert not exercise_is_verified(exercise=exercise)


def test_options_are_limited_to_the_tolerances_a_harness_has():
    budget = {"time_budget_seconds", "lane"}  # every harness takes these
    assert harness_option_keys(harness="lm-head-logits") == {"rtol", "atol", *budget}
    assert harness_option_keys(harness="kv-cache-bytes") == budget
    assert exercise_options_problems(harness="lm-head-logits", options={}) == []
    assert (
        exercise_options_problems(harness="lm-head-logits", options={"rtol": 1e-3})
        == []
    )
    assert exercise_options_problems(
        harness="kv-cache-bytes", options={"rtol": 1e-3}
    ) == [
        "unknown option 'rtol' for harness 'kv-cache-bytes' "
        "(accepted: lane, time_budget_seconds)"
    ]
    assert exercise_options_problems(
        harness="lm-head-logits", options={"atol": "small"}
    ) == ["option 'atol' must be a number from 0 to 1"]
    assert exercise_options_problems(harness="lm-head-logits", options=[1]) == [
        'options must be a JSON object such as {"rtol": 1e-4}'
    ]


@pytest.mark.slow
def test_the_command_verifies_and_reports_each_exercise():
    from django.core.management import call_command

    kv_exercise()
    out = StringIO()
    call_command("verify_exercises", "kv-cache-bytes", stdout=out)
    assert "kv-cache-bytes: passed" in out.getvalue()
    assert Exercise.objects.get().verified_at is not None
