"""`course check` grades with the bundle the server shipped, or says why it cannot."""

from __future__ import annotations

import hashlib

import pytest
from course import local, store
from course.errors import CourseError

EXERCISE = {
    "slug": "block-param-count",
    "harness": "block-param-count",
    "entry_point": "block_param_count",
}
RIGHT = "def block_param_count(n_embd):\n    return 12 * n_embd**2 + 13 * n_embd\n"


@pytest.fixture
def saved(monkeypatch, tmp_path) -> dict:
    """EXERCISE as `course get` saves it: the exercise and its bundle."""
    from grading_engine.learner_edition import bundle

    monkeypatch.setenv("COURSE_CONFIG_DIR", str(tmp_path / "config"))
    blob = bundle(EXERCISE["harness"])
    store.local_check_save(EXERCISE["slug"], blob)
    return {**EXERCISE, "local_check": {"sha256": hashlib.sha256(blob).hexdigest()}}


def test_a_server_without_bundles_is_named_not_guessed(saved):
    exercise = {**saved, "local_check": None}
    assert not local.bundle_current(exercise)
    with pytest.raises(CourseError, match="offers no local check of block-param-count"):
        local.check(exercise, RIGHT)


def test_a_damaged_or_outdated_bundle_is_fetched_again_not_used(saved):
    assert local.bundle_current(saved)
    store.local_check_save(saved["slug"], b"not the bundle the server offered")
    assert not local.bundle_current(saved)
    with pytest.raises(CourseError, match="run `course get block-param-count`"):
        local.check(saved, RIGHT)


def test_a_bundle_of_another_harness_is_refused(saved):
    from grading_engine.learner_edition import bundle

    other = bundle("kv-cache-bytes")
    store.local_check_save(saved["slug"], other)
    exercise = {**saved, "local_check": {"sha256": hashlib.sha256(other).hexdigest()}}
    with pytest.raises(CourseError, match="for another harness"):
        local.check(exercise, RIGHT)


def test_the_bundles_cases_are_the_ones_judged(saved, monkeypatch):
    """What grade() gets: the shipped visible cases and the shipped values."""
    from grading_engine import grading

    seen = {}

    def grade(**kwargs):
        seen.update(kwargs)
        raise RuntimeError("stop here")

    monkeypatch.setattr(grading, "grade", grade)
    with pytest.raises(CourseError, match="stop here"):
        local.check(saved, RIGHT)
    assert seen["visible_only"] is True
    assert [case["hidden"] for case in seen["cases"]] == [False, False]
    assert seen["expected"].cases == seen["cases"]
    assert seen["expected"].harness == "block-param-count"
