"""Cohort services and reads: join codes, the matrix, analytics, CSV, visibility."""

from __future__ import annotations

import csv
import io

import pytest
from django.db import IntegrityError

from grader.models import Submission
from grader.selectors import submission_get, submissions_visible_to
from teaching import cohorts
from teaching.cohort_analytics import cohort_analytics
from teaching.cohorts import CohortError, cohort_create, cohort_join, member_remove
from teaching.csv_files import csv_safe, submissions_csv
from teaching.matrix.build import UnknownSection, progress_matrix
from teaching.matrix.csv_export import matrix_csv
from teaching.models import Cohort, CohortMembership
from teaching.selectors import cohort_get_by_code, cohort_submissions
from tests.quiz.cohort_fixtures import *  # noqa: F403
from tests.quiz.cohort_fixtures import answer, read, submit

pytestmark = pytest.mark.django_db


# Services ------------------------------------------------------------------


def test_a_new_cohort_gets_a_random_unambiguous_join_code(instructor):
    codes = {cohort_create(owner=instructor, name=f"c{i}").join_code for i in range(20)}
    assert len(codes) == 20
    for code in codes:
        assert len(code) == cohorts.JOIN_CODE_LENGTH
        assert set(code) <= set(cohorts.JOIN_CODE_ALPHABET)
        assert not set(code) & set("01OIL")


def test_a_join_code_collision_is_retried(instructor, monkeypatch):
    taken = cohort_create(owner=instructor, name="first").join_code
    draws = iter([taken, taken, "FRESHCDE"])
    monkeypatch.setattr(cohorts, "join_code_generate", lambda: next(draws))
    cohort = cohort_create(owner=instructor, name="second")
    assert cohort.join_code == "FRESHCDE"
    assert Cohort.objects.count() == 2


def test_it_gives_up_clearly_when_every_code_collides(instructor, monkeypatch):
    taken = cohort_create(owner=instructor, name="first").join_code
    monkeypatch.setattr(cohorts, "join_code_generate", lambda: taken)
    with pytest.raises(CohortError, match="free join code"):
        cohort_create(owner=instructor, name="second")
    assert Cohort.objects.count() == 1


@pytest.mark.parametrize(
    ("name", "message"), [("   ", "Give the cohort a name"), ("x" * 201, "at most")]
)
def test_a_bad_cohort_name_is_refused(instructor, name, message):
    with pytest.raises(CohortError, match=message):
        cohort_create(owner=instructor, name=name)
    assert not Cohort.objects.exists()


def test_joining_is_idempotent_and_the_owner_cannot_join(instructor, learner):
    cohort = cohort_create(owner=instructor, name="  Spring   2026 ")
    assert cohort.name == "Spring 2026"
    _, created = cohort_join(cohort=cohort, user=learner)
    _, again = cohort_join(cohort=cohort, user=learner)
    assert (created, again) == (True, False)
    assert CohortMembership.objects.filter(cohort=cohort).count() == 1
    with pytest.raises(CohortError, match="You own this cohort"):
        cohort_join(cohort=cohort, user=instructor)


def test_a_member_can_only_be_in_a_cohort_once_at_the_database_level(
    instructor, learner
):
    cohort = cohort_create(owner=instructor, name="c")
    CohortMembership.objects.create(cohort=cohort, user=learner)
    with pytest.raises(IntegrityError):
        CohortMembership.objects.create(cohort=cohort, user=learner)


def test_codes_are_found_however_they_are_typed(instructor):
    cohort = cohort_create(owner=instructor, name="c")
    typed = " " + cohort.join_code[:4].lower() + " " + cohort.join_code[4:] + "\n"
    assert cohort_get_by_code(code=typed) == cohort


def test_removing_a_member_keeps_their_work(world, course):
    sub = submit(world.lea, course["exercises"]["ex-a"], "passed")
    assert member_remove(cohort=world.cohort, user_id=world.lea.pk) is True
    assert member_remove(cohort=world.cohort, user_id=world.lea.pk) is False
    assert Submission.objects.filter(pk=sub.pk).exists()
    assert [r.username for r in progress_matrix(cohort=world.cohort).rows] == ["leo"]


# The matrix --------------------------------------------------------------


def _cell(matrix, username, lesson_slug):
    row = next(r for r in matrix.rows if r.username == username)
    return next(c for c in row.cells if c.lesson.slug == lesson_slug)


def test_the_matrix_counts_reads_right_self_checks_and_passed_exercises(world, course):
    lessons, ex = course["lessons"], course["exercises"]
    first = lessons["first-lesson"]
    q0, q1, q2 = first.questions.order_by("order")
    read(world.lea, first)
    answer(world.lea, q0, False)
    answer(world.lea, q0, True)  # right on the second try counts
    answer(world.lea, q0, True)  # a question counts once however often right
    answer(world.lea, q1, False)
    submit(world.lea, ex["ex-a"], "failed")
    submit(world.lea, ex["ex-a"], "passed")
    submit(world.lea, ex["ex-a"], "passed")
    submit(world.lea, ex["ex-b"], "error")
    # Work by someone outside the cohort never shows.
    read(world.max, first)
    submit(world.max, ex["ex-b"], "passed")

    matrix = progress_matrix(cohort=world.cohort)
    assert [r.username for r in matrix.rows] == ["lea", "leo"]
    assert [les.slug for les in matrix.lessons] == [
        "first-lesson",
        "second-lesson",
        "third-lesson",
    ]
    cell = _cell(matrix, "lea", "first-lesson")
    assert (cell.read, cell.checks_right, cell.exercises_passed) == (True, 1, 1)
    assert (cell.lesson.checks_total, cell.lesson.exercises_total) == (3, 2)
    leo = _cell(matrix, "leo", "first-lesson")
    assert (leo.read, leo.checks_right, leo.exercises_passed) == (False, 0, 0)
    lea = matrix.rows[0]
    assert (lea.lessons_read, lea.checks_right, lea.exercises_passed) == (1, 1, 1)
    assert (matrix.checks_total, matrix.exercises_total) == (9, 3)


def test_the_matrix_filters_by_section_and_refuses_unknown_ones(world, course):
    matrix = progress_matrix(cohort=world.cohort, section="advanced")
    assert [les.slug for les in matrix.lessons] == ["third-lesson"]
    assert [g.slug for g in matrix.sections] == ["advanced"]
    with pytest.raises(UnknownSection):
        progress_matrix(cohort=world.cohort, section="nope")


@pytest.mark.parametrize(
    ("sort", "order", "used"),
    [
        ("learner", ["lea", "leo"], "learner"),
        ("-learner", ["leo", "lea"], "-learner"),
        ("-exercises", ["leo", "lea"], "-exercises"),
        ("exercises", ["lea", "leo"], "exercises"),
        ("-third-lesson", ["leo", "lea"], "-third-lesson"),
        ("-first-lesson", ["lea", "leo"], "-first-lesson"),
        ("-read", ["lea", "leo"], "-read"),
        ("no-such-column", ["lea", "leo"], "learner"),
    ],
)
def test_the_matrix_sorts_by_any_column(world, course, sort, order, used):
    lessons, ex = course["lessons"], course["exercises"]
    read(world.lea, lessons["first-lesson"])
    submit(world.leo, ex["ex-c"], "passed")
    submit(world.leo, ex["ex-a"], "failed")
    matrix = progress_matrix(cohort=world.cohort, sort=sort)
    assert [r.username for r in matrix.rows] == order
    assert matrix.sort == used


# Analytics -------------------------------------------------------------------


def _failed(*diagnoses):
    return [
        {"name": f"check {i}", "passed": False, "diagnosis": d, "message": "no"}
        for i, d in enumerate(diagnoses)
    ] + [{"name": "fine", "passed": True, "diagnosis": None, "message": ""}]


def test_analytics_counts_attempts_pass_rate_median_and_diagnoses(world, course):
    ex = course["exercises"]
    lea, leo = world.lea, world.leo
    # lea: fail, fail, pass -> 3 attempts to pass; leo: pass at once -> 1.
    submit(lea, ex["ex-a"], "failed", checks=_failed("copied-wte"), minutes_ago=30)
    submit(lea, ex["ex-a"], "failed", checks=_failed("copied-wte"), minutes_ago=20)
    submit(lea, ex["ex-a"], "passed", minutes_ago=10)
    submit(lea, ex["ex-a"], "failed", checks=_failed("missing-scale"), minutes_ago=5)
    submit(leo, ex["ex-a"], "error", minutes_ago=9)  # grader error: not counted
    submit(leo, ex["ex-a"], "passed", minutes_ago=8)
    # ex-b: leo fails twice (one check with no diagnosis), never passes.
    submit(leo, ex["ex-b"], "failed", checks=_failed("copied-wte", None))
    submit(leo, ex["ex-b"], "failed", checks=_failed("copied-wte", "copied-wte"))
    submit(leo, ex["ex-b"], "queued")
    # Outside the cohort: never counted.
    submit(world.max, ex["ex-a"], "failed", checks=_failed("copied-wte"))

    stats = {e.slug: e for e in cohort_analytics(cohort=world.cohort).exercises}
    a, b, c = stats["ex-a"], stats["ex-b"], stats["ex-c"]
    assert (a.attempts, a.learners, a.learners_passed) == (5, 2, 2)
    assert a.pass_rate == 1.0
    assert a.median_attempts_to_pass == 2.0  # median of [3, 1]
    assert [(d.diagnosis, d.count, d.learners) for d in a.diagnoses] == [
        ("copied-wte", 2, 1),
        ("missing-scale", 1, 1),
    ]
    assert (b.attempts, b.learners, b.learners_passed, b.pass_rate) == (2, 1, 0, 0.0)
    assert b.median_attempts_to_pass is None
    # A submission counts once per diagnosis even if two checks name it.
    assert [(d.diagnosis, d.count) for d in b.diagnoses] == [("copied-wte", 2)]
    assert (c.attempts, c.pass_rate, c.median_attempts_to_pass) == (0, None, None)


def test_analytics_ranks_self_checks_by_difficulty(world, course):
    q_easy, q_hard, _ = course["lessons"]["second-lesson"].questions.order_by("order")
    answer(world.lea, q_easy, True)
    answer(world.leo, q_easy, True)
    answer(world.lea, q_hard, False)
    answer(world.lea, q_hard, False)
    answer(world.leo, q_hard, True)
    answer(world.max, q_hard, True)  # outside the cohort
    questions = cohort_analytics(cohort=world.cohort).questions
    assert [(q.id, q.attempts, q.learners, q.right) for q in questions] == [
        (q_hard.id, 3, 2, 1),
        (q_easy.id, 2, 2, 2),
    ]
    assert [q.percent_right for q in questions] == [33.3, 100.0]
    assert questions[0].lesson == "second-lesson"


# CSV -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "safe"),
    [
        ("=HYPERLINK(1)", "'=HYPERLINK(1)"),
        ("+1", "'+1"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=1", "'\t=1"),
        ("plain", "plain"),
        (0.5, "0.5"),
        (True, "yes"),
        (None, ""),
    ],
)
def test_csv_cells_cannot_start_a_formula(value, safe):
    assert csv_safe(value) == safe


def test_the_matrix_csv_has_a_row_per_learner_and_escapes_names(
    world, course, make_user
):
    evil = make_user("=cmd", "learner")
    cohort_join(cohort=world.cohort, user=evil)
    read(world.lea, course["lessons"]["first-lesson"])
    submit(world.lea, course["exercises"]["ex-a"], "passed")
    rows = list(
        csv.reader(io.StringIO(matrix_csv(progress_matrix(cohort=world.cohort))))
    )
    header, body = rows[0], rows[1:]
    assert header[:4] == [
        "learner",
        "first-lesson read",
        "first-lesson self-checks right (of 3)",
        "first-lesson exercises passed (of 2)",
    ]
    assert header[-3:] == ["lessons read", "self-checks right", "exercises passed"]
    by_name = {r[0]: r for r in body}
    assert set(by_name) == {"'=cmd", "lea", "leo"}
    assert by_name["lea"][1:4] == ["yes", "0", "1"]
    assert by_name["lea"][-3:] == ["1", "0", "1"]


def test_the_submissions_csv_lists_failed_checks_and_escapes_code(world, course):
    submit(
        world.lea,
        course["exercises"]["ex-a"],
        "failed",
        checks=_failed("copied-wte"),
        code="=1+1",
    )
    rows = list(
        csv.DictReader(
            io.StringIO(submissions_csv(cohort_submissions(cohort=world.cohort)))
        )
    )
    assert len(rows) == 1
    row = rows[0]
    assert (row["learner"], row["exercise"], row["status"]) == ("lea", "ex-a", "failed")
    assert row["failed checks"] == "check 0"
    assert row["diagnoses"] == "copied-wte"
    assert row["code"] == "'=1+1"


# Who sees which submission -----------------------------------------------------


def test_instructors_see_submissions_of_their_cohorts_learners_only(world, course):
    ex = course["exercises"]["ex-a"]
    lea_sub = submit(world.lea, ex, "passed")
    max_sub = submit(world.max, ex, "passed")
    out_sub = submit(world.outsider, ex, "passed")
    own_sub = submit(world.owner, ex, "failed")

    def visible(user):
        return set(submissions_visible_to(user).values_list("pk", flat=True))

    assert visible(world.owner) == {lea_sub.pk, own_sub.pk}
    assert visible(world.other) == {max_sub.pk}
    assert visible(world.lea) == {lea_sub.pk}
    assert visible(world.superuser) == {lea_sub.pk, max_sub.pk, out_sub.pk, own_sub.pk}
    with pytest.raises(Submission.DoesNotExist):
        submission_get(user=world.other, submission_id=lea_sub.pk)
    member_remove(cohort=world.cohort, user_id=world.lea.pk)
    assert visible(world.owner) == {own_sub.pk}


def test_a_learner_in_two_cohorts_of_one_instructor_is_listed_once(world, course):
    second = cohort_create(owner=world.owner, name="Second")
    cohort_join(cohort=second, user=world.lea)
    submit(world.lea, course["exercises"]["ex-a"], "passed")
    assert submissions_visible_to(world.owner).count() == 1


def test_the_demo_instructor_has_a_demo_cohort_with_the_demo_learner(settings):
    from teaching.demo_accounts import DEMO_COHORT_CODE, demo_accounts_create

    demo_accounts_create()
    demo_accounts_create()  # idempotent
    cohort = Cohort.objects.get(join_code=DEMO_COHORT_CODE)
    assert cohort.owner.username == "instructor"
    assert list(cohort.memberships.values_list("user__username", flat=True)) == [
        "learner"
    ]
