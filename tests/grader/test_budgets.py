"""Time budgets: measured at verification, stored, overridable, shown, enforced."""

from __future__ import annotations

import pytest
from django.urls import reverse
from grading_engine.grading import grade
from grading_engine.harness.subprocess_runner import SubprocessRunner
from rest_framework.test import APIClient

from grader import budgets
from grader.exercise_content import exercise_forget_stale_budget
from grader.models import Exercise
from grader.verify import exercise_options_problems, exercise_verify

pytestmark = pytest.mark.django_db


def test_the_budget_is_ten_times_the_reference_at_least_one_and_a_half_seconds(
    settings,
):
    settings.GRADER_TIMEOUT_SECONDS = 60
    assert budgets.budget_from_reference(40.0) == 1.5  # the floor
    assert budgets.budget_from_reference(150.0) == 1.5
    assert budgets.budget_from_reference(301.0) == 3.1  # rounded up to 0.1 s
    assert budgets.budget_from_reference(9_000.0) == 60.0  # the cap
    settings.GRADER_TIMEOUT_SECONDS = 20
    assert budgets.budget_from_reference(9_000.0) == 20.0


def test_an_exercise_uses_its_measured_budget_its_option_or_the_cap(
    block_exercise, settings
):
    settings.GRADER_TIMEOUT_SECONDS = 60
    unmeasured = budgets.exercise_budget(block_exercise)
    assert unmeasured.seconds == 60.0 and "not measured yet" in unmeasured.why
    assert budgets.needs_measuring(block_exercise)
    block_exercise.reference_ms, block_exercise.time_budget_seconds = 123.0, 2.0
    measured = budgets.exercise_budget(block_exercise)
    assert measured.seconds == 2.0 and measured.label == "2 s of CPU time"
    assert measured.why == (
        "10× the reference solution's 0.12 s of CPU time, at least 1.5 s"
    )
    block_exercise.options = {"time_budget_seconds": 7.5}
    assert budgets.exercise_budget(block_exercise).seconds == 7.5
    assert budgets.exercise_budget(block_exercise).why == "set for this exercise"


def test_heavy_exercises_are_those_with_long_budgets_or_marked_so(block_exercise):
    assert budgets.exercise_lane(block_exercise) == "light"  # unmeasured
    block_exercise.time_budget_seconds = 4.0
    assert budgets.exercise_lane(block_exercise) == "light"
    block_exercise.time_budget_seconds = 4.1
    assert budgets.exercise_lane(block_exercise) == "heavy"
    block_exercise.options = {"lane": "light"}
    assert budgets.exercise_lane(block_exercise) == "light"


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"time_budget_seconds": 0.1}, "from 0.5 to 60"),
        ({"time_budget_seconds": 61}, "from 0.5 to 60"),
        ({"time_budget_seconds": "5"}, "must be a number of seconds"),
        ({"time_budget_seconds": True}, "must be a number of seconds"),
        ({"lane": "fast"}, 'must be "light" or "heavy"'),
    ],
)
def test_bad_budget_options_are_refused_with_a_reason(options, problem, settings):
    settings.GRADER_TIMEOUT_SECONDS = 60
    problems = exercise_options_problems(harness="kv-cache-bytes", options=options)
    assert len(problems) == 1 and problem in problems[0]
    fine = {"time_budget_seconds": 5, "lane": "heavy"}
    assert exercise_options_problems(harness="kv-cache-bytes", options=fine) == []


def test_the_content_files_give_the_full_forward_exercises_the_heavy_lane():
    import yaml

    from tests.conftest import PROJECT_ROOT

    for slug in ("gpt2-forward", "causal-self-attention"):
        path = PROJECT_ROOT / "content" / "exercises" / f"{slug}.yaml"
        spec = yaml.safe_load(path.read_text())
        assert spec["options"]["lane"] == "heavy", slug


@pytest.mark.slow
def test_verification_measures_the_reference_and_stores_the_budget(block_exercise):
    outcome = exercise_verify(exercise=block_exercise, runner=SubprocessRunner())
    assert outcome.passed, outcome.verification
    block_exercise.refresh_from_db()
    assert 0 < block_exercise.reference_ms == outcome.verification["duration_ms"]
    assert block_exercise.time_budget_seconds == budgets.budget_from_reference(
        block_exercise.reference_ms
    )
    # what was measured for this version is forgotten once the solution changes
    exercise_forget_stale_budget(slug=block_exercise.slug)
    assert Exercise.objects.get().time_budget_seconds is not None
    Exercise.objects.update(solution=block_exercise.solution + "\n# edited\n")
    exercise_forget_stale_budget(slug=block_exercise.slug)
    stale = Exercise.objects.get()
    assert stale.time_budget_seconds is None and stale.reference_ms is None


@pytest.mark.slow
def test_a_loop_is_stopped_at_the_budget_and_the_message_names_it():
    verdict = grade(
        harness="block-param-count",
        code="def block_param_count(n_embd):\n    while True:\n        pass\n",
        entry_point="block_param_count",
        runner=SubprocessRunner(),
        timeout=1.5,
        budget="10× the reference solution's 0.03 s, at least 2 s",
    )
    assert verdict.status == "error"
    [check] = verdict.checks
    assert check.name == "time limit"
    assert check.message.startswith(
        "took longer than 1.5 s, this exercise's time budget (10× the reference "
        "solution's 0.03 s, at least 2 s), and was stopped"
    )


def test_the_exercise_page_and_the_api_show_the_budget(client, learner, block_exercise):
    Exercise.objects.filter(pk=block_exercise.pk).update(
        reference_ms=61.0, time_budget_seconds=1.5
    )
    client.force_login(learner)
    page = client.get(reverse("exercise", args=[block_exercise.slug])).content.decode()
    assert "Time budget: <strong>1.5 s of CPU time</strong> per grade" in page
    why = "10× the reference solution&#x27;s 0.06 s of CPU time, at least 1.5 s"
    assert why in page
    api = APIClient()
    api.force_authenticate(learner)
    detail = api.get(reverse("api-exercise", args=[block_exercise.slug])).json()
    assert detail["time_budget"] == {
        "seconds": 1.5,
        "why": "10× the reference solution's 0.06 s of CPU time, at least 1.5 s",
    }
    assert detail["lane"] == "light"


@pytest.mark.slow
def test_a_failing_measurement_in_a_worker_unpublishes_nothing(block_exercise):
    from grader.verify import exercise_measure

    block_exercise.solution = "def block_param_count(n_embd):\n    return 0\n"
    block_exercise.save()
    assert not exercise_measure(exercise=block_exercise, runner=SubprocessRunner())
    row = Exercise.objects.get()
    assert row.published and row.time_budget_seconds is None
    assert row.verification == {}  # an author's verification is not replaced


def content_exercise(slug: str) -> Exercise:
    """An unsaved row for a content exercise, as a worker would measure it."""
    import yaml

    from tests.conftest import PROJECT_ROOT

    spec = yaml.safe_load(
        (PROJECT_ROOT / "content" / "exercises" / f"{slug}.yaml").read_text()
    )
    return Exercise(
        slug=slug,
        harness=spec["harness"],
        entry_point=spec["entry_point"],
        solution=spec["solution"],
        options={k: v for k, v in (spec.get("options") or {}).items() if k != "lane"},
    )


# The two most expensive references (about 0.3 s of CPU time: budgets above
# the 1.5 s floor, so a measurement's noise shows in them; logit-rank is the
# one a busy machine stopped in acceptance's parity run) and tie-weights,
# measured at 1,497 ms of wall time on a busy machine against 591 ms idle.
BUSY_MEASURED_SLUGS = ("nearest-tokens", "logit-rank", "tie-weights")


@pytest.mark.slow
@pytest.mark.sandbox
def test_wall_clock_time_the_reference_spends_off_the_cpu_is_not_in_its_budget(
    settings,
):
    """A reference that waits 2 s of wall-clock time (as a job preempted by
    another program waits) before its work is measured by the CPU time it
    used: far under the 2 s, so neither a busy machine nor a wait inflates a
    budget or moves an exercise to the heavy lane. The brute-force form (the
    same exercises measured idle and under a CPU hog per core) is in the
    exhaustive tier: on 2 cores shared with pytest's other worker, "idle"
    is not idle (a CI run read logit-rank 427 ms "idle", 274 ms busy)."""
    import shutil
    import time

    from grading_engine.sandbox import WarmPool

    from grader.verify import exercise_measure

    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap (bwrap) is not installed: the sandbox cannot run")
    settings.GRADER_TIMEOUT_SECONDS = 60
    exercise = content_exercise("tie-weights")
    exercise.solution += (
        "\n\nimport time as _time\n_work = tie_weights\n_waited = []\n\n\n"
        "def tie_weights(*args, **kwargs):\n"
        "    if not _waited:\n"
        "        _waited.append(_time.sleep(2))\n"
        "    return _work(*args, **kwargs)\n"
    )
    with WarmPool(1) as pool:
        started = time.monotonic()
        assert exercise_measure(exercise=exercise, runner=pool, repeats=1)
        waited = time.monotonic() - started
    assert waited >= 2
    assert exercise.verification["clock"] == "cpu"
    assert exercise.reference_ms < 1000, exercise.reference_ms
    assert budgets.exercise_lane(exercise) == budgets.LIGHT


@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.exhaustive
def test_a_budget_measured_on_a_busy_machine_is_the_one_measured_idle(settings):
    """Measured as a worker measures (exercise_measure: the cheapest of three
    runs in the warm pool), with nothing else running and then with a
    CPU-bound program on every core: the same budget within 20%, the same
    lane. In wall-clock time the busy measure was 2.5x the idle one. Needs a
    quiet machine (`make test-exhaustive`, nothing else running); `make
    test` holds the property structurally (the test above)."""
    import shutil

    from grading_engine.sandbox import WarmPool

    from grader.verify import exercise_measure
    from tests.cpu_load import cpu_hogs

    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap (bwrap) is not installed: the sandbox cannot run")
    settings.GRADER_TIMEOUT_SECONDS = 60
    with WarmPool(1) as pool:
        idle = {slug: content_exercise(slug) for slug in BUSY_MEASURED_SLUGS}
        for exercise in idle.values():
            assert exercise_measure(exercise=exercise, runner=pool)
        with cpu_hogs():
            busy = {slug: content_exercise(slug) for slug in BUSY_MEASURED_SLUGS}
            for exercise in busy.values():
                assert exercise_measure(exercise=exercise, runner=pool)
    # The lane follows the budget, so it is the same when the budgets agree,
    # unless they sit either side of the lane's limit: logit-rank's budget is
    # near 4 s, and in a full run on a slow host its two budgets, within 20%
    # of each other, fell either side (light idle, heavy busy). A slug whose
    # idle budget is within 20% of the limit is held to the budget's 20% only.
    limit = budgets.LIGHT_LANE_MAX_SECONDS
    lanes_compared = []
    for slug in BUSY_MEASURED_SLUGS:
        quiet, loaded = idle[slug], busy[slug]
        assert quiet.verification["clock"] == loaded.verification["clock"] == "cpu"
        ratio = loaded.time_budget_seconds / quiet.time_budget_seconds
        assert 1 / 1.2 <= ratio <= 1.2, (slug, quiet.reference_ms, loaded.reference_ms)
        if not limit / 1.2 <= quiet.time_budget_seconds <= limit * 1.2:
            lane = budgets.exercise_lane(loaded)
            assert lane == budgets.exercise_lane(quiet), slug
            lanes_compared.append(slug)
    assert lanes_compared, "no exercise's budget was clear of the lane's limit"
