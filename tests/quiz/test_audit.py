"""Every admin change to authored records leaves an audit entry: who, what, when."""

from __future__ import annotations

import pytest
from django.urls import reverse

from quiz.core.audit import audit_changes, audit_record, audit_snapshot
from quiz.models import AuditEntry, Diagnosis, FollowUp, Lesson, Question, Section
from teaching.models import Cohort

pytestmark = pytest.mark.django_db


@pytest.fixture
def lesson():
    section = Section.objects.create(slug="basics", order=1, title="Basics")
    lesson = Lesson.objects.create(
        section=section,
        slug="tying",
        order=1,
        title="Tying",
        question="Why 124M?",
        body="Body.",
        tags=["tying"],
    )
    FollowUp.objects.create(lesson=lesson, order=0, question="Q?", answer="A.")
    Question.objects.create(
        lesson=lesson, order=0, kind="recall", prompt="Explain.", model_answer="It."
    )
    return lesson


@pytest.fixture
def admin_client(client, admin_user):
    client.force_login(admin_user)
    return client


def lesson_form(lesson: Lesson, **overrides) -> dict:
    """The change form of `lesson` as the admin would post it, unchanged."""
    data = {
        "section": lesson.section_id,
        "order": lesson.order,
        "title": lesson.title,
        "slug": lesson.slug,
        "question": lesson.question,
        "takeaway": lesson.takeaway,
        "body": lesson.body,
        "tags": '["tying"]',
        "reading_time": lesson.reading_time,
    }
    for prefix, rows, fields in (
        ("follow_ups", lesson.follow_ups.all(), ["order", "question", "answer"]),
        (
            "questions",
            lesson.questions.all(),
            ["order", "kind", "prompt", "model_answer", "explanation"],
        ),
    ):
        rows = list(rows)
        data[f"{prefix}-TOTAL_FORMS"] = len(rows)
        data[f"{prefix}-INITIAL_FORMS"] = len(rows)
        for index, row in enumerate(rows):
            data[f"{prefix}-{index}-id"] = row.pk
            data[f"{prefix}-{index}-lesson"] = lesson.pk
            for name in fields:
                data[f"{prefix}-{index}-{name}"] = getattr(row, name)
            if prefix == "questions":
                data[f"{prefix}-{index}-choices"] = "[]"
                data[f"{prefix}-{index}-tolerance"] = row.tolerance
    data.update(overrides)
    return data


def entries(**filters) -> list[AuditEntry]:
    return list(AuditEntry.objects.filter(**filters).order_by("id"))


def test_adding_a_lesson_records_it_and_its_inline_rows(admin_client, admin_user):
    section = Section.objects.create(slug="basics", order=1, title="Basics")
    data = {
        "section": section.pk,
        "order": 2,
        "title": "Counting",
        "slug": "counting",
        "question": "How many?",
        "takeaway": "",
        "body": "Body",
        "tags": '["count"]',
        "reading_time": 4,
        "follow_ups-TOTAL_FORMS": 1,
        "follow_ups-INITIAL_FORMS": 0,
        "follow_ups-0-order": 0,
        "follow_ups-0-question": "Next?",
        "follow_ups-0-answer": "Yes.",
        "questions-TOTAL_FORMS": 0,
        "questions-INITIAL_FORMS": 0,
    }
    response = admin_client.post(reverse("admin:quiz_lesson_add"), data)
    assert response.status_code == 302, response.content.decode()[:2000]
    lesson = Lesson.objects.get(slug="counting")
    [created] = entries(model="quiz.Lesson")
    assert (created.actor, created.action) == (admin_user, "create")
    assert created.object_id == str(lesson.pk)
    assert created.object_repr == "Counting"
    assert created.changes["title"] == [None, "Counting"]
    assert created.changes["section"] == [None, "1. Basics"]
    assert created.changes["tags"] == [None, ["count"]]
    [follow_up] = entries(model="quiz.FollowUp")
    assert follow_up.action == "create"
    assert follow_up.changes["question"] == [None, "Next?"]
    assert follow_up.actor == admin_user


def test_an_edit_records_old_and_new_values_of_what_changed(admin_client, lesson):
    follow_up, question = lesson.follow_ups.get(), lesson.questions.get()
    data = lesson_form(
        lesson,
        title="Tying, revisited",
        **{"follow_ups-0-answer": "Better.", "questions-0-DELETE": "on"},
    )
    url = reverse("admin:quiz_lesson_change", args=[lesson.pk])
    response = admin_client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:3000]

    [update] = entries(model="quiz.Lesson")
    assert update.action == "update"
    assert update.changes == {"title": ["Tying", "Tying, revisited"]}
    [inline] = entries(model="quiz.FollowUp")
    assert (inline.action, inline.object_id) == ("update", str(follow_up.pk))
    assert inline.changes == {"answer": ["A.", "Better."]}
    [deleted] = entries(model="quiz.Question")
    assert (deleted.action, deleted.object_id) == ("delete", str(question.pk))
    assert deleted.changes["prompt"] == ["Explain.", None]
    assert not Question.objects.filter(pk=question.pk).exists()


def test_saving_without_changes_records_nothing(admin_client, lesson):
    url = reverse("admin:quiz_lesson_change", args=[lesson.pk])
    response = admin_client.post(url, lesson_form(lesson))
    assert response.status_code == 302, response.content.decode()[:3000]
    assert entries() == []


def test_long_text_is_cut_short_in_the_entry(admin_client, lesson):
    body = "word " * 1000
    url = reverse("admin:quiz_lesson_change", args=[lesson.pk])
    admin_client.post(url, lesson_form(lesson, body=body))
    [update] = entries(model="quiz.Lesson")
    old, new = update.changes["body"]
    assert old == "Body."
    assert new.startswith("word word")
    assert new.endswith("(4,999 characters)")  # the form strips the last space
    assert len(new) < 350


def test_deleting_in_the_admin_records_what_was_deleted(
    admin_client, lesson, admin_user
):
    pk = lesson.pk
    url = reverse("admin:quiz_lesson_delete", args=[pk])
    response = admin_client.post(url, {"post": "yes"})
    assert response.status_code == 302
    [deleted] = entries(model="quiz.Lesson")
    assert (deleted.action, deleted.object_id, deleted.actor) == (
        "delete",
        str(pk),
        admin_user,
    )
    assert deleted.changes["title"] == ["Tying", None]


def test_the_bulk_delete_action_records_each_row(admin_client, lesson):
    ids = [
        FollowUp.objects.create(lesson=lesson, order=n, question=f"Q{n}", answer="A").pk
        for n in (1, 2)
    ]
    response = admin_client.post(
        reverse("admin:quiz_followup_changelist"),
        {"action": "delete_selected", "_selected_action": ids, "post": "yes"},
    )
    assert response.status_code == 302
    deleted = entries(model="quiz.FollowUp", action="delete")
    assert sorted(e.object_id for e in deleted) == sorted(str(i) for i in ids)


def test_many_to_many_changes_are_recorded(admin_client, lesson):
    diagnosis = Diagnosis.objects.create(slug="copied-not-shared", summary="Copied")
    url = reverse("admin:quiz_diagnosis_change", args=[diagnosis.pk])
    response = admin_client.post(
        url, {"slug": "copied-not-shared", "summary": "Copied", "lessons": [lesson.pk]}
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    [update] = entries(model="quiz.Diagnosis")
    assert update.changes == {"lessons": [[], ["Tying"]]}


def test_cohorts_and_their_members_are_audited(admin_client, admin_user, learner):
    data = {
        "name": "Spring",
        "owner": admin_user.pk,
        "join_code": "spring-26",
        "memberships-TOTAL_FORMS": 1,
        "memberships-INITIAL_FORMS": 0,
        "memberships-0-user": learner.pk,
    }
    response = admin_client.post(reverse("admin:teaching_cohort_add"), data)
    assert response.status_code == 302, response.content.decode()[:2000]
    cohort = Cohort.objects.get()
    [created] = entries(model="teaching.Cohort")
    assert created.object_id == str(cohort.pk)
    assert created.changes["join_code"] == [None, "spring-26"]
    [member] = entries(model="teaching.CohortMembership")
    assert member.changes["user"] == [None, "lea"]


def test_a_rejected_form_writes_no_entry(admin_client, lesson):
    url = reverse("admin:quiz_lesson_change", args=[lesson.pk])
    response = admin_client.post(url, lesson_form(lesson, title=""))
    assert response.status_code == 200  # the form with its error
    assert entries() == []


def test_commands_record_with_no_actor(lesson):
    before = audit_snapshot(lesson)
    lesson.title = "Loaded"
    entry = audit_record(
        actor=None,
        action="update",
        instance=lesson,
        changes=audit_changes(old=before, new=audit_snapshot(lesson)),
    )
    assert entry.actor is None
    assert entry.changes == {"title": ["Tying", "Loaded"]}
    assert entry.model == "quiz.Lesson"
    with pytest.raises(ValueError, match="unknown audit action"):
        audit_record(actor=None, action="rename", instance=lesson, changes={})


def test_the_audit_page_lists_filters_and_searches(admin_client, lesson):
    url = reverse("admin:quiz_lesson_change", args=[lesson.pk])
    admin_client.post(url, lesson_form(lesson, title="Tying, revisited"))
    Section.objects.create(slug="other", order=2, title="Other")
    audit_record(
        actor=None,
        action="create",
        instance=Section.objects.get(slug="other"),
        changes={},
    )
    changelist = reverse("admin:quiz_auditentry_changelist")
    html = admin_client.get(changelist).content.decode()
    assert "Tying, revisited" in html
    assert "(command)" in html
    only_lessons = admin_client.get(changelist, {"model": "quiz.Lesson"})
    assert "Tying, revisited" in only_lessons.content.decode()
    assert "2. Other" not in only_lessons.content.decode()
    search = admin_client.get(changelist, {"q": "Other"}).content.decode()
    assert "2. Other" in search
    assert "Tying, revisited" not in search
    entry = AuditEntry.objects.get(model="quiz.Lesson")
    detail = admin_client.get(
        reverse("admin:quiz_auditentry_change", args=[entry.pk])
    ).content.decode()
    assert "<td>Tying</td><td>Tying, revisited</td>" in detail
