"""Fair grading with real workers: budgets, lanes, one slot per learner,
cancel, and two worker hosts sharing the queue.

These assert the order things happen in (read from the rows' own
timestamps), never how fast: the figures live in benchmarks/surge_bench.py.
"""

from __future__ import annotations

import pytest

from grader.budgets import exercise_budget
from grader.models import Exercise, Submission
from grader.services import submission_cancel, submission_create
from tests.pipeline.conftest import load_exercises, wait_for

# One warm worker per shape for the whole file (tests.pipeline.conftest.warm).
pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.xdist_group("warm-workers"),
]

TERMINAL = {"passed", "failed", "error", "cancelled"}
BLOCK_RIGHT = (
    "def block_param_count(n_embd):\n    return 12 * n_embd**2 + 13 * n_embd\n"
)
BLOCK_SLOW = (
    "import time\n"
    "def block_param_count(n_embd):\n"
    "    time.sleep(0.4)\n"
    "    return 12 * n_embd**2 + 13 * n_embd\n"
)


def loop(entry_point: str) -> str:
    return f"def {entry_point}(*args):\n    while True:\n        pass\n"


def with_options(slug: str, **options) -> Exercise:
    load_exercises(slug)
    exercise = Exercise.objects.get(slug=slug)
    exercise.options = options
    exercise.save()
    return exercise


def submit(user, exercise, code) -> Submission:
    return submission_create(user=user, exercise=exercise, code=code)


def finished(rows: list[Submission], timeout: float = 240) -> list[Submission]:
    pks = [row.pk for row in rows]

    def done():
        found = {r.pk: r for r in Submission.objects.filter(pk__in=pks)}
        if all(r.status in TERMINAL for r in found.values()):
            return [found[pk] for pk in pks]
        return None

    return wait_for(done, timeout=timeout, what="every verdict")


def test_a_loop_is_stopped_at_its_exercises_measured_budget(warm, make_user):
    load_exercises("tie-weights")  # unmeasured: its worker measures it first
    warm.ready(slots=1)
    [row] = finished([submit(make_user("ann"), Exercise.objects.get(
        slug="tie-weights"), loop("tie_weights"))])  # fmt: skip
    exercise = Exercise.objects.get(slug="tie-weights")
    budget = exercise_budget(exercise)
    assert exercise.reference_ms is not None  # measured before this grade
    assert exercise.verification["clock"] == "cpu"  # in the job's CPU time
    assert row.status == "error" and row.time_budget_seconds == budget.seconds
    message = row.checks[0]["message"]
    # Stopped by its CPU budget; on a machine so busy that the demoted loop
    # got almost no core, by the backstop moved for that: never blamed on
    # waiting (grading_engine.sandbox.job_clock).
    assert f"{budget.seconds:g} s of CPU time" in message
    assert f"this exercise's time budget ({budget.why})" in message
    assert "code that waits" not in message


def test_a_learners_submissions_wait_behind_their_own_and_others_go_between(
    warm, make_user
):
    exercise = with_options("block-param-count", time_budget_seconds=15)
    warm.ready(slots=2)
    ann, ben = make_user("ann"), make_user("ben")
    a1, a2, a3 = (submit(ann, exercise, BLOCK_SLOW) for _ in range(3))
    b1 = submit(ben, exercise, BLOCK_SLOW)
    a1, a2, a3, b1 = finished([a1, a2, a3, b1])
    assert {r.status for r in (a1, a2, a3, b1)} == {"passed"}
    # ann never held two slots: each of hers started after the last ended
    assert a1.finished_at <= a2.started_at and a2.finished_at <= a3.started_at
    # while ann's line waited, ben (submitted last) did not wait behind it
    assert b1.started_at < a2.started_at


def test_heavy_loops_leave_a_slot_for_a_light_answer(warm, make_user):
    heavy = with_options("gpt2-forward", lane="heavy", time_budget_seconds=5)
    light = with_options("block-param-count", time_budget_seconds=15)
    warm.ready(slots=2)
    loops = [submit(make_user(f"h{n}"), heavy, loop("gpt2_forward")) for n in range(3)]
    answer = submit(make_user("lin"), light, BLOCK_RIGHT)
    *loops, answer = finished([*loops, answer])
    assert [r.lane for r in loops] == ["heavy"] * 3 and answer.lane == "light"
    assert answer.status == "passed" and {r.status for r in loops} == {"error"}
    # heavy grades took turns in their one slot; the light one did not wait:
    # it was claimed while the first heavy loop still held its slot
    for earlier, later in zip(loops, loops[1:], strict=False):
        assert earlier.finished_at <= later.started_at
    assert loops[0].started_at < answer.started_at < loops[0].finished_at


def test_loops_beyond_the_burst_or_before_a_fix_are_set_aside(db_stack, make_user):
    """One slot and one burst slot: the first loop turns slow into the burst;
    the next two turn slow with the burst full and are set aside (stopped,
    queued again behind everyone), so the right answer submitted after all
    three is graded while the first loop still runs. Each set-aside loop
    runs again, in the burst only, and ends once at its budget."""
    exercise = with_options("block-param-count", time_budget_seconds=3)
    db_stack.start_worker(slots=1, GRADER_BURST_SLOTS="1")
    loops = [
        submit(make_user(f"l{n}"), exercise, loop("block_param_count"))
        for n in range(3)
    ]
    answer = submit(make_user("ann"), exercise, BLOCK_RIGHT)
    *loops, answer = finished([*loops, answer])
    assert answer.status == "passed" and not answer.set_aside
    assert [r.status for r in loops] == ["error"] * 3
    assert "3 s of CPU time" in loops[1].checks[0]["message"]
    assert [r.set_aside for r in loops] == [False, True, True]
    # set aside is neither a crash nor a second grade: one claim counted
    assert [r.grading_attempts for r in loops] == [1, 1, 1]
    # the answer did not wait for the first loop's budget ...
    assert answer.finished_at < loops[0].finished_at
    # ... and the set-aside loops ran again only once the burst was free
    assert loops[0].finished_at <= min(loops[1].started_at, loops[2].started_at)

    # A learner whose loop runs slow in the burst sends a fix: the loop is
    # set aside for it (one grading slot per learner), not waited for.
    ann = Submission.objects.get(pk=answer.pk).user
    looping = submit(ann, exercise, loop("block_param_count"))
    wait_for(
        lambda: Submission.objects.filter(pk=looping.pk, status="running").exists(),
        timeout=120,
        what="the loop to start",
    )
    fix = submit(ann, exercise, BLOCK_RIGHT)
    looping, fix = finished([looping, fix])
    assert fix.status == "passed" and looping.status == "error"
    assert looping.set_aside and looping.grading_attempts == 1
    assert fix.finished_at < looping.started_at  # its second run came after


def test_cancelling_a_running_loop_frees_its_slot_at_once(warm, make_user):
    exercise = with_options("block-param-count", time_budget_seconds=20)
    warm.ready(slots=1)
    ann, ben = make_user("ann"), make_user("ben")
    looping = submit(ann, exercise, loop("block_param_count"))
    waiting = submit(ben, exercise, BLOCK_RIGHT)
    wait_for(
        lambda: Submission.objects.filter(pk=looping.pk, status="running").exists(),
        timeout=120,
        what="the loop to start",
    )
    cancelled = submission_cancel(user=ann, submission_id=looping.pk)
    assert cancelled.status == "cancelled"
    looping, waiting = finished([looping, waiting])
    assert waiting.status == "passed"
    # graded long before the loop's 20 s budget would have freed the slot
    assert (waiting.finished_at - looping.started_at).total_seconds() < 20
    assert looping.status == "cancelled" and looping.checks == []  # not overwritten


def test_two_worker_hosts_share_the_queue_and_grade_each_once(warm, make_user):
    exercise = with_options("block-param-count", time_budget_seconds=15)
    hosts = [warm.ready(slots=1), warm.another()]  # one slot each
    learners = [make_user(f"u{n}") for n in range(4)]
    rows = [submit(user, exercise, BLOCK_SLOW) for user in learners for _ in range(3)]
    rows = finished(rows)
    assert {r.status for r in rows} == {"passed"}
    assert {r.grading_attempts for r in rows} == {1}  # nothing graded twice
    by_host = {str(h.pid): 0 for h in hosts}
    for row in rows:
        by_host[row.claimed_by.rpartition(":")[2]] += 1
    assert sum(by_host.values()) == 12 and min(by_host.values()) > 0, by_host
