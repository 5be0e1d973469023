"""The queue's order: one slot per learner, turns between learners, lanes.

These claim rows the way a worker thread does (grader.dispatch) without
grading them, against the real PostgreSQL.
"""

from __future__ import annotations

import os
import socket
from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from grader import dispatch, submission_grading
from grader.lanes import HEAVY, LIGHT, Lanes
from grader.models import Submission

pytestmark = pytest.mark.django_db


@pytest.fixture
def queue(block_exercise):
    """queue(user, lane="light") adds a queued submission, each a moment later."""
    clock = {"t": timezone.now() - timedelta(minutes=5)}

    def add(user, lane=LIGHT) -> Submission:
        clock["t"] += timedelta(seconds=1)
        row = Submission.objects.create(
            user=user, exercise=block_exercise, code="x", seed=1, lane=lane,
            enqueued_at=clock["t"],
        )  # fmt: skip
        Submission.objects.filter(pk=row.pk).update(created_at=clock["t"])
        return row

    return add


def claim(lanes: Lanes) -> Submission | None:
    claimed = dispatch._claim_next(lanes)
    if claimed is None:
        return None
    row, hold, _ = claimed
    row.hold = hold
    return row


def finish(row: Submission) -> None:
    """What a worker does after a verdict: end the row, promote the next."""
    Submission.objects.filter(pk=row.pk).update(status="passed")
    submission_grading.submission_promote_next(user_id=row.user_id)


def test_a_learner_never_holds_two_slots_and_waits_behind_their_own(queue, make_user):
    ann = make_user("ann")
    first, second = queue(ann), queue(ann)
    lanes = Lanes(slots=4, heavy=2)
    assert claim(lanes).pk == first.pk
    assert claim(lanes) is None  # slots are free, but the next is ann's own
    finish(first)
    assert claim(lanes).pk == second.pk


def test_learners_take_turns_instead_of_one_draining_their_line(queue, make_user):
    ann, ben = make_user("ann"), make_user("ben")
    a1, a2, a3 = queue(ann), queue(ann), queue(ann)
    b1 = queue(ben)  # submitted after all of ann's
    lanes = Lanes(slots=1, heavy=1)
    order = []
    while (row := claim(lanes)) is not None:
        order.append(row.pk)
        row.hold.release()
        finish(row)
    # ann's second waits behind ben's first, which was ready before it was
    assert order == [a1.pk, b1.pk, a2.pk, a3.pk]


def test_heavy_exercises_cannot_take_the_last_light_slot(queue, make_user):
    users = [make_user(name) for name in ("hal", "hugo", "lin")]
    h1, h2 = queue(users[0], HEAVY), queue(users[1], HEAVY)
    light = queue(users[2], LIGHT)  # the newest of the three
    lanes = Lanes(slots=2, heavy=1)
    first = claim(lanes)
    assert first.pk == h1.pk
    assert claim(lanes).pk == light.pk  # h2 is older, but heavy is full
    assert claim(lanes) is None and lanes.open_lanes() == []  # both slots busy
    first.hold.slow()  # running long, but without burst slots it keeps its own
    assert lanes.open_lanes() == []
    first.hold.release()
    assert claim(lanes).pk == h2.pk


def test_grades_that_run_long_let_burst_slots_take_the_next(queue, make_user):
    loops = [queue(make_user(f"loop{n}")) for n in range(4)]
    right = queue(make_user("ann"))
    lanes = Lanes(slots=2, heavy=1, burst=2)
    first, second = claim(lanes), claim(lanes)
    assert [first.pk, second.pk] == [loops[0].pk, loops[1].pk]
    assert claim(lanes) is None  # two slots, both graded at full priority
    first.hold.slow()
    second.hold.slow()
    second.hold.slow()  # told twice, counted once
    third, fourth = claim(lanes), claim(lanes)
    assert [third.pk, fourth.pk] == [loops[2].pk, loops[3].pk]
    assert claim(lanes) is None  # the two new ones hold the slots
    third.hold.slow()
    fourth.hold.slow()
    assert claim(lanes) is None  # slots plus burst: four at most
    first.hold.release()  # its budget ran out
    assert claim(lanes).pk == right.pk


def test_a_grade_turning_slow_with_the_burst_full_is_set_aside(queue, make_user):
    """Slow grades never hold more than the burst: one more is set aside,
    and runs again only in burst room, slow from its start."""
    loops = [queue(make_user(f"loop{n}")) for n in range(3)]
    right = queue(make_user("ann"))
    lanes = Lanes(slots=1, heavy=1, burst=1)
    first = claim(lanes)
    assert first.hold.slow() is False  # into the burst
    second = claim(lanes)
    assert second.pk == loops[1].pk and second.hold.slow() is True
    assert second.hold.slow() is False  # told twice, set aside once
    assert submission_grading.submission_set_aside(second) == 1
    second.hold.release()
    row = Submission.objects.get(pk=second.pk)
    assert (row.status, row.set_aside, row.grading_attempts) == ("queued", True, 0)
    assert row.started_at is None and row.claimed_by == ""
    # behind everyone ready: fresh grades take the base slot first
    third = claim(lanes)
    assert third.pk == loops[2].pk
    assert claim(lanes) is None  # the base slot is busy, the burst is full
    third.hold.release()
    finish(third)
    answer = claim(lanes)
    assert answer.pk == right.pk
    answer.hold.release()
    finish(answer)
    assert claim(lanes) is None  # only the set-aside one waits: burst room only
    first.hold.release()
    finish(first)
    again = claim(lanes)
    assert again.pk == second.pk and again.hold.is_slow
    # it holds the burst, not the base slot: a fresh grade still fits
    assert lanes.open_lanes() == [LIGHT, HEAVY]
    assert lanes.open_lanes(set_aside=True) == []


def test_a_learners_next_answer_goes_ahead_of_their_loop_set_aside(queue, make_user):
    from grader.selectors import submission_queue_position, submission_waits_behind_own

    ann = make_user("ann")
    looping, fix = queue(ann), queue(ann)
    lanes = Lanes(slots=1, heavy=1, burst=1)
    row = claim(lanes)
    assert row.pk == looping.pk
    assert submission_grading.submission_set_aside(row) == 1
    row.hold.release()
    looping.refresh_from_db()
    fix.refresh_from_db()
    # her line: the fix first, the loop set aside behind it
    assert submission_queue_position(fix) == 1 and not submission_waits_behind_own(fix)
    assert submission_queue_position(looping) == 2
    assert submission_waits_behind_own(looping)
    graded = claim(lanes)
    assert graded.pk == fix.pk  # the burst had room for the loop: the fix first
    assert claim(lanes) is None  # one grading slot per learner
    graded.hold.release()
    finish(graded)
    assert claim(lanes).pk == looping.pk


def test_without_a_burst_a_slow_grade_keeps_its_slot(queue, make_user):
    """Nowhere to set it aside: GRADER_BURST_SLOTS=0 keeps the old rule, and
    a row another host set aside takes a slot as any other would (it must
    not wait for burst room that this host never has)."""
    ann, ben = make_user("ann"), make_user("ben")
    queue(ann)
    aside = queue(ben)
    Submission.objects.filter(pk=aside.pk).update(set_aside=True)
    lanes = Lanes(slots=1, heavy=1, burst=0)
    first = claim(lanes)
    assert first.hold.slow() is False
    assert claim(lanes) is None  # its one slot is held
    first.hold.release()
    assert claim(lanes).pk == aside.pk


def test_a_learners_cancel_wins_over_setting_aside(queue, make_user):
    row = queue(make_user("ann"))
    claimed = claim(Lanes(slots=1, heavy=1, burst=1))
    Submission.objects.filter(pk=row.pk).update(status="cancelled")
    assert submission_grading.submission_set_aside(claimed) == 0
    assert Submission.objects.get(pk=row.pk).status == "cancelled"


def test_the_database_refuses_a_second_running_row_for_one_learner(queue, make_user):
    ann = make_user("ann")
    first, second = queue(ann), queue(ann)
    Submission.objects.filter(pk=first.pk).update(status="running")
    with pytest.raises(IntegrityError), transaction.atomic():
        Submission.objects.filter(pk=second.pk).update(status="running")
    # and a claim of it by id (a stray message) is simply refused
    assert submission_grading.claim(second.pk) is None
    assert Submission.objects.get(pk=second.pk).status == "queued"


def test_a_claimed_row_names_its_worker_and_counts_the_attempt(queue, make_user):
    row = queue(make_user("ann"))
    claimed = submission_grading.claim(row.pk)
    assert claimed.status == "running" and claimed.grading_attempts == 1
    assert claimed.claimed_by == f"{socket.gethostname()}:{os.getpid()}"
    assert submission_grading.claim(row.pk) is None  # never twice


def left_running(row, *, by: str, attempts: int = 1, ago: timedelta = timedelta()):
    """The row as a worker `by` (host:pid) left it, mid-grade, `ago`."""
    Submission.objects.filter(pk=row.pk).update(
        status="running",
        grading_attempts=attempts,
        claimed_by=by,
        started_at=timezone.now() - ago,
    )


def dead_pid() -> int:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return pid


def test_a_row_left_running_by_a_dead_worker_goes_back_in_line(queue, make_user):
    row = queue(make_user("ann"))
    left_running(row, by=f"{socket.gethostname()}:{dead_pid()}")
    assert submission_grading.submissions_requeue_abandoned(local_only=True) == 1
    row.refresh_from_db()
    assert row.status == "queued" and row.claimed_by == ""
    assert claim(Lanes(slots=1, heavy=1)).grading_attempts == 2


def test_a_row_abandoned_twice_ends_as_the_graders_fault(queue, make_user):
    ann = make_user("ann")
    row, after = queue(ann), queue(ann)
    left_running(
        row,
        by="elsewhere:1",
        attempts=submission_grading.MAX_GRADING_ATTEMPTS,
        ago=timedelta(hours=1),  # its lease long expired
    )
    assert submission_grading.submissions_requeue_abandoned() == 1
    row.refresh_from_db()
    assert row.status == "error"
    assert "this was not your code's fault" in row.checks[0]["message"]
    assert claim(Lanes(slots=1, heavy=1)).pk == after.pk


def test_a_live_workers_row_is_left_alone(queue, make_user):
    row = queue(make_user("ann"))
    left_running(row, by=f"{socket.gethostname()}:{os.getpid()}")
    assert submission_grading.submissions_requeue_abandoned(local_only=True) == 0
    assert submission_grading.submissions_requeue_abandoned() == 0
    assert Submission.objects.get(pk=row.pk).status == "running"


def test_the_sweep_wakes_a_worker_only_for_rows_left_waiting(
    queue, make_user, settings
):
    settings.SWEEP_QUEUED_AFTER_SECONDS = 60
    woken = []
    fresh = queue(make_user("ann"))
    Submission.objects.filter(pk=fresh.pk).update(enqueued_at=timezone.now())
    assert dispatch.submissions_sweep(wake=lambda: woken.append(1)) == 0
    assert woken == []  # a row queued a moment ago has its own wake-up

    queue(make_user("bob"))  # enqueued minutes ago: its message was lost
    assert dispatch.submissions_sweep(wake=lambda: woken.append(1)) == 1
    assert woken == [1]


def test_a_grade_that_fails_to_end_puts_its_row_back_in_line(
    queue, make_user, monkeypatch, settings
):
    settings.GRADER_RUNNER = "cold"
    row = queue(make_user("ann"))

    def broken(submission, **kwargs):
        raise RuntimeError("the database went away mid-grade")

    monkeypatch.setattr(submission_grading, "grade_claimed", broken)
    with pytest.raises(RuntimeError):
        dispatch.submission_dispatch(wake=lambda: None)
    row.refresh_from_db()
    assert (row.status, row.claimed_by, row.grading_attempts) == ("queued", "", 1)
    assert claim(Lanes(slots=1, heavy=1)).pk == row.pk  # not stuck "running"


def test_a_database_error_while_claiming_gives_the_slot_back(
    queue, make_user, monkeypatch
):
    from django.db import OperationalError

    queue(make_user("ann"))
    lanes = Lanes(slots=1, heavy=1)

    def down(pk):
        raise OperationalError("the database is restarting")

    monkeypatch.setattr(submission_grading, "claim", down)
    with pytest.raises(OperationalError):
        dispatch._claim_next(lanes)
    assert lanes.open_lanes() == [LIGHT, HEAVY]  # nothing held


# -- a database restart in the middle of a claim (PostgreSQL restart test) --


@pytest.mark.django_db(transaction=True)
def test_a_claim_whose_commit_reply_was_lost_is_recognised_as_ours(
    queue, make_user, monkeypatch
):
    """The UPDATE committed but the connection died before the reply: the
    retry finds the row by its stamp instead of leaving it running unowned."""
    from django.db import OperationalError

    row = queue(make_user("ann"))
    once = submission_grading._claim_once
    calls = []

    def commit_then_lose_the_reply(submission_id, stamp):
        calls.append(submission_id)
        once(submission_id, stamp)
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(submission_grading, "_claim_once", commit_then_lose_the_reply)
    claimed = submission_grading.claim(row.pk)
    assert calls == [row.pk]  # the retry did not claim a second time
    assert claimed is not None and claimed.pk == row.pk
    assert (claimed.status, claimed.grading_attempts) == ("running", 1)
    assert claimed.claimed_by == submission_grading.worker_id()


@pytest.mark.django_db(transaction=True)
def test_a_claim_cut_off_before_its_commit_leaves_the_row_queued_then_takes_it(
    queue, make_user, monkeypatch
):
    from django.db import OperationalError
    from django.db.models.query import QuerySet

    row = queue(make_user("ann"))
    get, seen = QuerySet.get, []

    def down_once(self, *args, **kwargs):
        if not seen:
            seen.append(get(Submission.objects.all(), pk=row.pk).status)
            raise OperationalError("the database is restarting")
        return get(self, *args, **kwargs)

    monkeypatch.setattr(QuerySet, "get", down_once)
    claimed = submission_grading.claim(row.pk)
    assert seen == ["running"]  # the failed try had updated it, uncommitted
    assert claimed.pk == row.pk
    assert (claimed.status, claimed.grading_attempts) == ("running", 1)
