"""A database filled at the schema before the layers keeps every row.

Diagnosis moved from the grader app to quiz without touching its tables
(quiz 0004 and grader 0005 change only Django's state, and relabel its
content type). This test migrates a real PostgreSQL database back to quiz 0003
and grader 0003, fills one row of every model through the historical models,
migrates forward, and finds each row again, field for field, through today's
models: the diagnosis with its lessons and with its content type, so its
permissions, their grants and its admin log entries.
"""

from __future__ import annotations

import datetime as dt
import uuid

import pytest
from django.apps import apps as current_apps
from django.conf import settings
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from quiz.models import Diagnosis

BEFORE = [
    ("quiz", "0003_progress_cohorts_audit_figures"),
    ("grader", "0003_exercise_verification_diagnosis"),
]
# app label and model name now, for a model's label before the move
MOVED = {
    ("grader", "Diagnosis"): ("quiz", "Diagnosis"),
    ("quiz", "Cohort"): ("teaching", "Cohort"),
    ("quiz", "CohortMembership"): ("teaching", "CohortMembership"),
}
WHEN = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)
# Columns added after BEFORE, and what an old row holds in them afterwards.
ADDED = {
    ("grader", "Exercise"): {
        "reference_ms": None,
        "time_budget_seconds": None,
        "version": 1,
        "right_solutions": [],
        "declaration": {},
    },
    ("grader", "Submission"): {
        "lane": "light",
        "time_budget_seconds": None,
        "exercise_version": None,
        "set_aside": False,
    },
}


def _migrate(targets) -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(targets)


def _latest() -> list[tuple[str, str]]:
    return MigrationExecutor(connection).loader.graph.leaf_nodes()


def _historical_apps():
    """The models as they were at BEFORE (the other apps as they are now)."""
    # lms and teaching (on top of both) did not exist yet: their migrations
    # are unapplied.
    moving = ("quiz", "grader", "lms", "teaching")
    others = [node for node in _latest() if node[0] not in moving]
    return MigrationExecutor(connection).loader.project_state(BEFORE + others).apps


def _fill(apps) -> dict:
    """One row of every quiz and grader model; returns {model: pk}."""
    m = apps.get_model
    lea = m("auth", "User").objects.create(username="lea", password="x")
    ian = m("auth", "User").objects.create(username="ian", password="y")
    section = m("quiz", "Section").objects.create(
        slug="the-block", order=1, title="The block", description="About it."
    )
    lesson = m("quiz", "Lesson").objects.create(
        section=section,
        slug="tying",
        order=1,
        title="Tying",
        question="Why tie?",
        takeaway="Share it.",
        body="One matrix.\n",
        tags=["tying"],
        reading_time=4,
        source_path="content/01/01-tying.md",
    )
    follow_up = m("quiz", "FollowUp").objects.create(
        lesson=lesson, order=0, question="Why?", answer="Because."
    )
    question = m("quiz", "Question").objects.create(
        lesson=lesson,
        order=0,
        kind="choice",
        prompt="Pick one.",
        choices=["a", "b"],
        correct_choice=1,
        explanation="b.",
    )
    figure = m("quiz", "Figure").objects.create(
        name="param-breakdown", caption="Where they go", svg="<svg/>", source_hash="ab"
    )
    read = m("quiz", "LessonRead").objects.create(user=lea, lesson=lesson)
    attempt = m("quiz", "QuestionAttempt").objects.create(
        user=lea, question=question, answer="1", correct=True
    )
    card = m("quiz", "ReviewCard").objects.create(
        user=lea, follow_up=follow_up, state={"due": WHEN.isoformat()}, due=WHEN
    )
    log = m("quiz", "ReviewLog").objects.create(user=lea, card=card, rating=3)
    cohort = m("quiz", "Cohort").objects.create(
        name="Spring", owner=ian, join_code="ABCDEFGH"
    )
    membership = m("quiz", "CohortMembership").objects.create(cohort=cohort, user=lea)
    audit = m("quiz", "AuditEntry").objects.create(
        actor=ian,
        action="update",
        model="quiz.Lesson",
        object_id=str(lesson.pk),
        object_repr="Tying",
        changes={"title": ["Tie", "Tying"]},
    )
    exercise = m("grader", "Exercise").objects.create(
        slug="tie-weights",
        lesson=lesson,
        title="Tie the weights",
        harness="tie-weights",
        entry_point="tie_weights",
        signature="tie_weights(model) -> None",
        prompt="Tie them.",
        starter="def tie_weights(model):\n    ...\n",
        solution="def tie_weights(model):\n    pass\n",
        wrong_solutions=[{"name": "copy", "code": "x"}],
        options={"rtol": 0.001},
        verified_at=WHEN,
        verification={"status": "passed"},
        source_path="content/exercises/tie-weights.yaml",
    )
    submission = m("grader", "Submission").objects.create(
        id=uuid.uuid4(),
        user=lea,
        exercise=exercise,
        code="x = 1",
        seed=42,
        status="failed",
        score=0.5,
        checks=[{"name": "c", "passed": False, "diagnosis": "copied-not-shared"}],
        stdout="out",
        stderr="err",
        grading_attempts=1,
        claimed_by="host:1",
        enqueued_at=WHEN,
        started_at=WHEN,
        finished_at=WHEN,
        grade_ms=12.5,
    )
    diagnosis = m("grader", "Diagnosis").objects.create(
        slug="copied-not-shared", summary="Copied, not shared"
    )
    diagnosis.lessons.add(lesson)
    rows = [
        section,
        lesson,
        follow_up,
        question,
        figure,
        read,
        attempt,
        card,
        log,
        cohort,
        membership,
        audit,
        exercise,
        submission,
        diagnosis,
    ]
    return {(r._meta.app_label, r._meta.object_name): r.pk for r in rows}


def _stored(model, pk) -> dict:
    """Every column of one row, as the database holds it."""
    names = [field.attname for field in model._meta.concrete_fields]
    return model.objects.filter(pk=pk).values(*names).get()


def _diagnosis_admin_history(apps, diagnosis_pk) -> dict:
    """Diagnosis' content type (grader's, as before the move) with a granted
    permission and an admin log entry; returns their ids."""
    ContentTypeThen = apps.get_model("contenttypes", "ContentType")
    content_type, _ = ContentTypeThen.objects.get_or_create(
        app_label="grader", model="diagnosis"
    )
    permission, _ = apps.get_model("auth", "Permission").objects.get_or_create(
        content_type=content_type,
        codename="change_diagnosis",
        defaults={"name": "Can change diagnosis"},
    )
    group, _ = apps.get_model("auth", "Group").objects.get_or_create(name="admin")
    group.permissions.add(permission)
    entry = apps.get_model("admin", "LogEntry").objects.create(
        user=apps.get_model("auth", "User").objects.get(username="ian"),
        content_type=content_type,
        object_id=str(diagnosis_pk),
        object_repr="copied-not-shared",
        action_flag=2,
        change_message="[]",
    )
    return {
        "content_type": content_type.pk,
        "permission": permission.pk,
        "group": group.pk,
        "log_entry": entry.pk,
    }


@pytest.mark.django_db(transaction=True)
def test_a_database_from_before_the_layers_keeps_every_row():
    try:
        _migrate(BEFORE)
        old = _historical_apps()
        pks = _fill(old)
        before = {
            label: _stored(old.get_model(*label), pk) for label, pk in pks.items()
        }
        history = _diagnosis_admin_history(old, pks[("grader", "Diagnosis")])

        _migrate(_latest())
        ContentType.objects.clear_cache()

        for label, pk in pks.items():
            model = current_apps.get_model(*MOVED.get(label, label))
            now = _stored(model, pk)
            assert {k: now[k] for k in before[label]} == before[label], label
            assert {k: now[k] for k in now.keys() - before[label].keys()} == ADDED.get(
                label, {}
            ), label  # columns added since hold their defaults
            assert model.objects.count() == 1, label
        diagnosis = Diagnosis.objects.get(pk=pks[("grader", "Diagnosis")])
        assert [lesson.slug for lesson in diagnosis.lessons.all()] == ["tying"]
        assert Diagnosis._meta.db_table == "grader_diagnosis"
        content_type = ContentType.objects.get_for_model(Diagnosis)
        assert content_type.pk == history["content_type"]
        assert (content_type.app_label, content_type.model) == ("quiz", "diagnosis")
        assert not ContentType.objects.filter(app_label="grader", model="diagnosis")
        permission = Permission.objects.get(pk=history["permission"])
        assert permission.content_type_id == content_type.pk
        assert permission in Group.objects.get(pk=history["group"]).permissions.all()
        entry = LogEntry.objects.get(pk=history["log_entry"])
        assert entry.get_edited_object() == diagnosis
    finally:
        _migrate(_latest())  # later tests need today's schema


def test_old_diagnosis_admin_links_lead_to_the_new_place(client):
    response = client.get("/admin/grader/diagnosis/7/change/?_changelist_filters=a")
    assert response.status_code == 302
    assert response["Location"] == (
        "/admin/quiz/diagnosis/7/change/?_changelist_filters=a"
    )
    listing = client.get("/admin/grader/diagnosis/")
    assert listing["Location"] == "/admin/quiz/diagnosis/"


@pytest.mark.django_db(transaction=True)
def test_a_learner_graded_in_two_slots_keeps_one_running_after_the_migration():
    """Before grader 0006 a learner could have two rows running at once; the
    one-running-per-learner constraint then needs one of them back in line."""
    before_queue = [("grader", "0005_diagnosis_to_quiz")]
    try:
        _migrate(before_queue)
        old = MigrationExecutor(connection).loader.project_state(before_queue).apps
        user = old.get_model("auth", "User").objects.create(username="lea")
        exercise = old.get_model("grader", "Exercise").objects.create(
            slug="x", title="X", harness="tie-weights", entry_point="f",
            signature="f()", prompt="p", starter="s", solution="s",
        )  # fmt: skip
        rows = [
            old.get_model("grader", "Submission").objects.create(
                user=user,
                exercise=exercise,
                code="c",
                seed=1,
                status="running",
                claimed_by="host:1",
                started_at=WHEN + dt.timedelta(seconds=n),
            )  # fmt: skip
            for n in range(2)
        ]
        _migrate(_latest())
        from grader.models import Submission

        first, second = (Submission.objects.get(pk=row.pk) for row in rows)
        assert first.status == "running" and first.claimed_by == "host:1"
        assert second.status == "queued" and second.claimed_by == ""
    finally:
        _migrate(_latest())


@pytest.mark.django_db(transaction=True)
def test_the_exercise_versions_migration_reverses():
    """grader 0008 (versions) unapplies cleanly and applies again."""
    try:
        _migrate([("grader", "0007_regrades")])
        with connection.cursor() as cursor:
            tables = connection.introspection.table_names(cursor)
            columns = {
                c.name
                for c in connection.introspection.get_table_description(
                    cursor, "grader_exercise"
                )
            }
        assert "grader_exerciseversion" not in tables
        assert "version" not in columns
        _migrate(_latest())
        with connection.cursor() as cursor:
            assert "grader_exerciseversion" in connection.introspection.table_names(
                cursor
            )
    finally:
        _migrate(_latest())


@pytest.mark.django_db(transaction=True)
def test_wall_clock_budgets_are_forgotten_so_workers_measure_cpu_time():
    """grader 0010: a budget measured on the wall clock (15 s on a busy
    machine, where CPU time gives 1.5 s) is cleared, to be measured again."""
    before = [("grader", "0009_exercise_right_solutions")]
    try:
        _migrate(before)
        old = MigrationExecutor(connection).loader.project_state(before).apps
        exercise = old.get_model("grader", "Exercise").objects.create(
            slug="x", title="X", harness="tie-weights", entry_point="f",
            signature="f()", prompt="p", starter="s", solution="s",
            reference_ms=1497.0, time_budget_seconds=15.0,
        )  # fmt: skip
        _migrate(_latest())
        from grader.budgets import exercise_budget, exercise_lane, needs_measuring
        from grader.models import Exercise

        row = Exercise.objects.get(pk=exercise.pk)
        assert (row.reference_ms, row.time_budget_seconds) == (None, None)
        assert needs_measuring(row)
        assert exercise_lane(row) == "light"  # heavy before: 15 s > 4 s
        # The course-wide limit until a worker measures it.
        assert exercise_budget(row).seconds == settings.GRADER_TIMEOUT_SECONDS
    finally:
        _migrate(_latest())


@pytest.mark.django_db(transaction=True)
def test_tokens_from_drfs_authtoken_table_keep_working_hashed():
    """quiz 0007 carries DRF's one-per-user tokens over as hashed ApiTokens and
    empties the old table, so no usable key stays stored as it is."""
    from django.contrib.auth.models import User

    from quiz.core.api.tokens import token_for_key

    key = "a1b2c3d4" + "e" * 32
    try:
        _migrate([("quiz", "0006_cohort_instructors")])
        lea = User.objects.create_user("lea")
        with connection.cursor() as cursor:
            cursor.execute(
                "CREATE TABLE IF NOT EXISTS authtoken_token (key varchar(40) "
                "PRIMARY KEY, created timestamptz NOT NULL, user_id integer)"
            )
            cursor.execute(
                "INSERT INTO authtoken_token VALUES (%s, %s, %s)", [key, WHEN, lea.pk]
            )
        _migrate(_latest())
        token = token_for_key(key)
        assert token.user == lea and token.created_at == WHEN
        assert token.prefix == "a1b2c3d4" and key not in token.key_hash
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM authtoken_token")
            assert cursor.fetchone() == (0,)
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DROP TABLE IF EXISTS authtoken_token")
        _migrate(_latest())


@pytest.mark.django_db(transaction=True)
def test_tokens_issued_before_scopes_become_learn_tokens(client):
    """quiz 0012 (issue 43): a token from before scopes keeps a learner's
    work (a `course login` goes on fetching and submitting) and loses the
    rest: listing and revoking tokens, instructor actions."""
    import hashlib

    from quiz.core.models import ApiToken

    key = "0ld70ken" + "1" * 32
    try:
        _migrate([("quiz", "0011_quiz_integrity_and_tools")])
        old = (
            MigrationExecutor(connection)
            .loader.project_state([("quiz", "0011_quiz_integrity_and_tools")])
            .apps
        )
        ian = old.get_model("auth", "User").objects.create(username="ian")
        old.get_model("quiz", "ApiToken").objects.create(
            user=ian,
            name="course on laptop",
            prefix=key[:8],
            key_hash=hashlib.sha256(key.encode()).hexdigest(),
            created_at=dt.datetime.now(dt.UTC),
        )
        _migrate(_latest())
        assert ApiToken.objects.get(prefix=key[:8]).scopes == ["learn"]
        auth = {"HTTP_AUTHORIZATION": f"Token {key}"}
        assert client.get("/api/v1/exercises/", **auth).status_code == 200
        listed = client.get("/api/v1/auth/tokens/", **auth)
        assert listed.status_code == 403
        assert "'manage-tokens'" in listed.json()["detail"]
    finally:
        _migrate(_latest())
