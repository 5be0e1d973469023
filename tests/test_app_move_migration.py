"""Teaching's move from the quiz app to its own app keeps every row.

Cohorts, assignments and quizzes moved from the quiz app to `teaching`
(teaching 0001, lms 0004 and quiz 0013 change only Django's state): their
tables keep their quiz_ names. This test migrates a real PostgreSQL database
back to the last migrations before the move, fills one row of every moved
table through the historical models (the cohort's instructors too) and lms's
rows that point to them, grants a permission and writes an admin log entry
and audit entries, migrates forward, and finds each row again, column for
column, through today's models; lms's foreign keys still lead to them, the
content types say `teaching` and keep their permissions, grants and log, and
the audit trail names the models by their new label. Back again, everything
says `quiz` once more.
"""

from __future__ import annotations

import datetime as dt
import uuid

import pytest
from django.apps import apps as current_apps
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from lms.models import LineItem, LmsCourse, ScoreSync
from quiz.models import AuditEntry
from teaching.models import Cohort, Quiz

# The leaves of main just before the move; teaching did not exist.
BEFORE = [
    ("quiz", "0012_apitoken_scopes"),
    ("grader", "0011_submission_set_aside"),
    ("lms", "0003_quiz_line_items"),
]
UNAPPLIED = [("teaching", None)]
MOVED = [
    "Cohort",
    "CohortMembership",
    "Assignment",
    "AssignmentItem",
    "AssignmentExtension",
    "ScoreOverride",
    "Quiz",
    "QuizSlot",
    "QuizAttempt",
    "QuizCodeAnswer",
    "QuizAccommodation",
    "QuizRegrade",
    "QuizRegradeResult",
    "QuizQuestionChange",
    "QuizItemOverride",
]
THROUGH_TABLE = "quiz_cohort_instructors"
WHEN = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.UTC)
LATER = WHEN + dt.timedelta(days=7)


def _migrate(targets) -> None:
    MigrationExecutor(connection).migrate(targets)


def _latest() -> list[tuple[str, str]]:
    return MigrationExecutor(connection).loader.graph.leaf_nodes()


def _after_the_move() -> list[tuple[str, str]]:
    """Today's leaves with the grader held where the move left it: its
    later migrations (0012 on) add tables of their own, not the move's."""
    return [BEFORE[1] if app == "grader" else (app, name) for app, name in _latest()]


def _to_before() -> None:
    _migrate(BEFORE + UNAPPLIED)


def _historical_apps():
    """The models as they were at BEFORE (the other apps as they are now)."""
    moving = ("quiz", "grader", "lms", "teaching")
    others = [node for node in _latest() if node[0] not in moving]
    return MigrationExecutor(connection).loader.project_state(BEFORE + others).apps


def _tables() -> set[str]:
    with connection.cursor() as cursor:
        return set(connection.introspection.table_names(cursor))


def _stored(model, pk) -> dict:
    """Every column of one row, as the database holds it."""
    names = [field.attname for field in model._meta.concrete_fields]
    return model.objects.filter(pk=pk).values(*names).get()


def _fill(apps) -> dict:
    """One row of every moved model and what they need; returns their pks by
    model name, and the lms rows' and the instructor's under their own keys."""
    m = apps.get_model
    User = m("auth", "User")
    lea = User.objects.create(username="lea", password="x")
    ian = User.objects.create(username="ian", password="y")
    section = m("quiz", "Section").objects.create(slug="block", order=1, title="B")
    lesson = m("quiz", "Lesson").objects.create(
        section=section, slug="tying", order=1, title="Tying", question="Why?"
    )
    exercise = m("grader", "Exercise").objects.create(
        slug="tie-weights", lesson=lesson, title="Tie", harness="tie-weights",
        entry_point="tie", signature="tie(model)", prompt="p", starter="s",
        solution="s",
    )  # fmt: skip
    submission = m("grader", "Submission").objects.create(
        id=uuid.uuid4(), user=lea, exercise=exercise, code="x = 1", seed=7,
        status="passed", score=1.0,
    )  # fmt: skip

    cohort = m("quiz", "Cohort").objects.create(
        name="Spring", owner=ian, join_code="SPRING26"
    )
    cohort.instructors.add(ian)
    membership = m("quiz", "CohortMembership").objects.create(cohort=cohort, user=lea)
    quiz = m("quiz", "Quiz").objects.create(
        cohort=cohort, title="Week 1", opens_at=WHEN, closes_at=LATER,
        time_limit=7.5, attempts_allowed=2, created_by=ian,
    )  # fmt: skip
    assignment = m("quiz", "Assignment").objects.create(
        cohort=cohort, title="Week 1", opens_at=WHEN, due_at=LATER,
        late_policy="penalty", penalty_per_day=0.1, penalty_cap=0.5, created_by=ian,
    )  # fmt: skip
    item = m("quiz", "AssignmentItem").objects.create(
        assignment=assignment, kind="quiz", quiz=quiz, weight=2.0, order=1
    )
    extension = m("quiz", "AssignmentExtension").objects.create(
        assignment=assignment, learner=lea, due_at=LATER, granted_by=ian
    )
    override = m("quiz", "ScoreOverride").objects.create(
        item=item, learner=lea, score=0.75, reason="Late by a minute.", set_by=ian
    )
    slot = m("quiz", "QuizSlot").objects.create(
        quiz=quiz, order=0, points=2.0, draw=1, pool={"lessons": ["tying"]}
    )
    attempt = m("quiz", "QuizAttempt").objects.create(
        quiz=quiz, learner=lea, number=1, seed="abc", started_at=WHEN,
        deadline=WHEN + dt.timedelta(minutes=7, seconds=30), state="submitted",
        items=[{"slot": 0, "ref": "x:tie-weights"}], answers={"0": {"value": "x"}},
        submitted_at=WHEN, submitted_by="learner", points=1.0, possible=2.0,
        score=0.5, results=[0.5], flags=[1],
    )  # fmt: skip
    code_answer = m("quiz", "QuizCodeAnswer").objects.create(
        attempt=attempt, item=0, submission=submission, fraction=1.0
    )
    accommodation = m("quiz", "QuizAccommodation").objects.create(
        quiz=quiz, learner=lea, time_factor=1.5, extra_attempts=1, granted_by=ian
    )
    regrade = m("quiz", "QuizRegrade").objects.create(
        quiz=quiz, requested_by=ian, what="q:1 key", total=1, changed=1
    )
    regrade_result = m("quiz", "QuizRegradeResult").objects.create(
        regrade=regrade, attempt=attempt, old_points=1.0, old_score=0.5,
        old_results=[0.5], new_points=2.0, new_score=1.0, new_results=[1.0],
        changed=True,
    )  # fmt: skip
    change = m("quiz", "QuizQuestionChange").objects.create(
        quiz=quiz, ref="q:1", action="key", answer=2, comment="Typo.", created_by=ian
    )
    item_override = m("quiz", "QuizItemOverride").objects.create(
        attempt=attempt, item=0, fraction=1.0, comment="Right idea.", set_by=ian
    )
    moved = [
        cohort, membership, assignment, item, extension, override, quiz, slot,
        attempt, code_answer, accommodation, regrade, regrade_result, change,
        item_override,
    ]  # fmt: skip
    assert sorted(r._meta.object_name for r in moved) == sorted(MOVED)

    registration = m("lti_tool", "LtiRegistration").objects.create(
        name="Canvas", issuer="https://canvas.example", client_id="c1",
        auth_url="https://canvas.example/auth", token_url="https://canvas.example/t",
        keyset_url="https://canvas.example/jwks",
    )  # fmt: skip
    deployment = m("lti_tool", "LtiDeployment").objects.create(
        registration=registration, deployment_id="d1"
    )
    context = m("lti_tool", "LtiContext").objects.create(
        deployment=deployment, id_on_platform="course-1"
    )
    course = m("lms", "LmsCourse").objects.create(context=context, cohort=cohort)
    line_items = [
        m("lms", "LineItem").objects.create(
            course=course, assignment=assignment, url="https://canvas.example/li/1"
        ),
        m("lms", "LineItem").objects.create(
            course=course, quiz=quiz, url="https://canvas.example/li/2"
        ),
    ]
    syncs = [
        m("lms", "ScoreSync").objects.create(
            course=course, assignment=assignment, learner=lea, lms_user_id="u1",
            score=75.0, computed_at=WHEN,
        ),
        m("lms", "ScoreSync").objects.create(
            course=course, quiz=quiz, learner=lea, lms_user_id="u1", score=50.0,
            computed_at=WHEN,
        ),
    ]  # fmt: skip
    pks = {r._meta.object_name: r.pk for r in moved}
    pks["ian"] = ian.pk
    pks["course"] = course.pk
    pks["line_items"] = [row.pk for row in line_items]
    pks["syncs"] = [row.pk for row in syncs]
    return pks


def _admin_history(apps, pks) -> dict:
    """Every moved model's content type with its permissions (as post_migrate
    made them before the move), one granted to a group, an admin log entry
    on the quiz, and audit entries naming a moved model and a staying one."""
    ContentTypeThen = apps.get_model("contenttypes", "ContentType")
    PermissionThen = apps.get_model("auth", "Permission")
    content_types, permissions = {}, {}
    for name in MOVED:
        content_type, _ = ContentTypeThen.objects.get_or_create(
            app_label="quiz", model=name.lower()
        )
        content_types[name] = content_type.pk
        for action in ("add", "change", "delete", "view"):
            PermissionThen.objects.get_or_create(
                content_type=content_type,
                codename=f"{action}_{name.lower()}",
                defaults={"name": f"Can {action} {name.lower()}"},
            )
        permissions[name] = set(
            PermissionThen.objects.filter(content_type=content_type).values_list(
                "pk", flat=True
            )
        )
    change_quiz = PermissionThen.objects.get(
        content_type_id=content_types["Quiz"], codename="change_quiz"
    )
    group, _ = apps.get_model("auth", "Group").objects.get_or_create(name="admin")
    group.permissions.add(change_quiz)
    entry = apps.get_model("admin", "LogEntry").objects.create(
        user_id=pks["ian"],
        content_type_id=content_types["Quiz"],
        object_id=str(pks["Quiz"]),
        object_repr="Week 1",
        action_flag=2,
        change_message="[]",
    )
    Audit = apps.get_model("quiz", "AuditEntry")
    audits = {
        "teaching.Quiz": Audit.objects.create(
            action="update", model="quiz.Quiz", object_id=str(pks["Quiz"]),
            object_repr="Week 1", changes={"title": ["W1", "Week 1"]},
        ).pk,
        "quiz.Lesson": Audit.objects.create(
            action="update", model="quiz.Lesson", object_id="1", object_repr="Tying",
        ).pk,
    }  # fmt: skip
    return {
        "content_types": content_types,
        "permissions": permissions,
        "change_quiz": change_quiz.pk,
        "group": group.pk,
        "log_entry": entry.pk,
        "audits": audits,
    }


def _assert_labels(history: dict, label: str) -> None:
    """Every moved model's content type (the same row) says `label` and keeps
    its permissions; the audit entries name the quiz with `label`."""
    ContentType.objects.clear_cache()
    for name, pk in history["content_types"].items():
        content_type = ContentType.objects.get(pk=pk)
        assert (content_type.app_label, content_type.model) == (label, name.lower())
        kept = set(content_type.permission_set.values_list("pk", flat=True))
        assert kept == history["permissions"][name], name
    stale = "teaching" if label == "quiz" else "quiz"
    names = [name.lower() for name in MOVED]
    assert not ContentType.objects.filter(app_label=stale, model__in=names)
    audits = history["audits"]
    assert AuditEntry.objects.get(pk=audits["teaching.Quiz"]).model == f"{label}.Quiz"
    assert AuditEntry.objects.get(pk=audits["quiz.Lesson"]).model == "quiz.Lesson"


@pytest.mark.django_db(transaction=True)
def test_the_move_to_the_teaching_app_keeps_every_row():
    try:
        _to_before()
        tables = _tables()
        old = _historical_apps()
        pks = _fill(old)
        history = _admin_history(old, pks)
        before = {
            name: _stored(old.get_model("quiz", name), pks[name]) for name in MOVED
        }

        _migrate(_after_the_move())

        assert _tables() == tables  # no table made, dropped or renamed
        latest = MigrationExecutor(connection).loader.project_state(_latest()).apps
        for name in MOVED:
            model = current_apps.get_model("teaching", name)
            table = f"quiz_{name.lower()}"
            assert model._meta.db_table == table, name
            # The migrations' state holds the same table the model reads.
            assert latest.get_model("teaching", name)._meta.db_table == table, name
            assert _stored(model, pks[name]) == before[name], name
            assert model.objects.count() == 1, name
        with pytest.raises(LookupError):
            current_apps.get_model("quiz", "Quiz")

        cohort = Cohort.objects.get(pk=pks["Cohort"])
        through = Cohort.instructors.through
        assert through._meta.db_table == THROUGH_TABLE
        assert [u.username for u in cohort.instructors.all()] == ["ian"]
        assert through.objects.count() == 1
        quiz = Quiz.objects.get(pk=pks["Quiz"])
        assert quiz.cohort == cohort
        assert quiz.assignment_items.get().assignment.cohort == cohort

        # lms's foreign keys lead to the moved rows, both ways.
        course = LmsCourse.objects.get(pk=pks["course"])
        assert course.cohort == cohort and cohort.lms_course == course
        items = LineItem.objects.filter(pk__in=pks["line_items"]).order_by("pk")
        assert [i.source.pk for i in items] == [pks["Assignment"], pks["Quiz"]]
        assert [type(i.source).__name__ for i in items] == ["Assignment", "Quiz"]
        syncs = ScoreSync.objects.filter(pk__in=pks["syncs"]).order_by("pk")
        assert [s.source.pk for s in syncs] == [pks["Assignment"], pks["Quiz"]]
        assert quiz.lms_line_items.get().pk == pks["line_items"][1]
        assert quiz.lms_score_syncs.get().pk == pks["syncs"][1]

        # Permissions, grants and the admin log follow the content types.
        _assert_labels(history, "teaching")
        content_type = ContentType.objects.get_for_model(Quiz)
        assert content_type.pk == history["content_types"]["Quiz"]
        change_quiz = Permission.objects.get(pk=history["change_quiz"])
        assert (change_quiz.content_type, change_quiz.codename) == (
            content_type,
            "change_quiz",
        )
        assert change_quiz in Group.objects.get(pk=history["group"]).permissions.all()
        entry = LogEntry.objects.get(pk=history["log_entry"])
        assert entry.get_edited_object() == quiz
        assert entry.get_admin_url() == f"/admin/teaching/quiz/{quiz.pk}/change/"

        # And back: the state before the move, labels and all.
        _to_before()
        assert _tables() == tables
        _assert_labels(history, "quiz")
        old = _historical_apps()
        for name in MOVED:
            assert _stored(old.get_model("quiz", name), pks[name]) == before[name]
    finally:
        _migrate(_latest())  # later tests need today's schema
        ContentType.objects.clear_cache()


def test_old_admin_links_of_the_moved_models_lead_to_the_new_place(client):
    for model in ("cohort", "quiz", "quizattempt"):
        response = client.get(f"/admin/quiz/{model}/3/change/?_changelist_filters=a")
        assert response.status_code == 302
        assert response["Location"] == (
            f"/admin/teaching/{model}/3/change/?_changelist_filters=a"
        )
    assert client.get("/admin/quiz/cohort/")["Location"] == "/admin/teaching/cohort/"
    # A model that stayed is not redirected (quizquestion starts like quiz).
    staying = client.get("/admin/quiz/quizquestion/")
    assert staying.status_code == 302
    assert staying["Location"].startswith("/admin/login/")
