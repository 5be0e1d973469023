"""learner_scores_changed: sent once a change commits, each receiver once.

The layers above connect to it in their AppConfig.ready() (teaching.apps,
lms.apps); a receiver that raises is logged and never fails the change that
announced it (quiz.core.score_events).
"""

from __future__ import annotations

import contextlib

import pytest
from django.apps import apps
from django.db import transaction

from quiz.core.score_events import learner_scores_changed, scores_changed
from quiz.learning.progress import question_attempt_create
from quiz.models import Question, QuestionAttempt
from tests.score_signal import receiving


def connected_uids() -> list:
    # Django keys each receiver by (dispatch_uid, sender id).
    return [key[0] for key, *_ in learner_scores_changed.receivers]


def test_ready_connects_teaching_then_the_lms_once_however_often_it_runs():
    expected = ["quiz-code-verdicts", "lms-scores"]  # INSTALLED_APPS order
    assert connected_uids() == expected
    for label in ("teaching", "lms", "teaching", "lms"):
        apps.get_app_config(label).ready()
    assert connected_uids() == expected


@pytest.mark.django_db
def test_receivers_hear_sorted_unique_ids_once_after_commit(
    django_capture_on_commit_callbacks,
):
    heard = []

    def receiver(sender, *, user_ids, **kwargs):
        heard.append(user_ids)

    with receiving(receiver, "test-heard"):
        with django_capture_on_commit_callbacks(execute=True) as callbacks:
            scores_changed([3, 1, 3])
            scores_changed([])  # nothing changed: nothing sent
            assert heard == []  # not before the commit
        assert len(callbacks) == 1
        assert heard == [[1, 3]]


@pytest.mark.django_db
def test_a_change_rolled_back_is_never_announced(django_capture_on_commit_callbacks):
    heard = []

    def receiver(sender, *, user_ids, **kwargs):
        heard.append(user_ids)

    with receiving(receiver, "test-heard"):
        with django_capture_on_commit_callbacks(execute=True) as callbacks:
            with contextlib.suppress(LookupError), transaction.atomic():
                scores_changed([1])
                raise LookupError
        assert callbacks == [] and heard == []


@pytest.mark.django_db(transaction=True)
def test_a_receiver_that_raises_is_logged_and_the_answer_still_commits(
    learner, content_tree, caplog
):
    from quiz.content.loader import content_load

    content_load(root=content_tree.root)
    question = Question.objects.filter(kind=Question.Kind.CHOICE).first()
    heard = []

    def broken(sender, **kwargs):
        raise RuntimeError("the LMS is down")

    def after(sender, *, user_ids, **kwargs):
        heard.append(user_ids)

    with receiving(broken, "test-broken"), receiving(after, "test-after"):
        question_attempt_create(user=learner, question=question, data={"answer": "0"})
    # Committed (a real commit: this test runs outside a test transaction),
    # the failure logged as before, and the receivers after it still heard.
    assert QuestionAttempt.objects.filter(user=learner, question=question).exists()
    # Logged once (it was twice: by Django and again by scores_changed).
    (record,) = [r for r in caplog.records if r.levelname == "ERROR"]
    assert record.name == "django.dispatch" and "broken" in record.getMessage()
    assert record.exc_info[0] is RuntimeError
    assert heard == [[learner.pk]]
