"""The answers lower layers ask of higher ones come from what settings name.

config/settings.py names each provider by dotted path (quiz.core.providers);
a page uses whatever the setting names now, a test's override included, and
a setting left empty means what no layer above would: nothing added.
"""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import Client, override_settings
from django.utils import timezone

from grader.exercise_notes import exercise_notes
from grader.selectors import submissions_visible_to
from quiz.content.exercise_store import ExerciseStore, exercise_store
from quiz.core.exam_mode import exam_lock
from quiz.core.providers import provider, providers
from quiz.learning.exercise_progress import ExerciseProgress, exercise_progress
from quiz.learning.panels import home_panels, progress_panels
from teaching.assignments.learner_assignments import assignments_panel
from teaching.quizzes.learner_quizzes import quizzes_panel
from tests.quiz.cohort_fixtures import *  # noqa: F403
from tests.quiz.cohort_fixtures import submit

HERE = __name__
LISTS = (
    "SUBMISSION_VIEWER_SCOPES",
    "EXERCISE_NOTE_SOURCES",
    "HOME_PANELS",
    "PROGRESS_PANELS",
    "EXAM_LOCK_PROVIDERS",
)
asked: list[str] = []


def first_panel(*, user) -> None:
    asked.append("first")


def second_panel(*, user) -> dict:
    asked.append("second")
    return {"template": "teaching/_assignments_panel.html", "assignments": []}


def due_note(*, user, exercise) -> list[dict]:
    return [
        {
            "assignment": f"Test note for {user.username} on {exercise.slug}",
            "due_at": timezone.now(),
            "extended": False,
            "past_due": False,
            "late_policy": "",
        }
    ]


def everyone(user):
    from django.contrib.auth import get_user_model

    return get_user_model().objects.values("pk")


def html(client: Client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, url
    return response.content.decode()


def test_each_provider_the_settings_name_imports_and_fits_its_protocol():
    for setting in LISTS:
        assert providers(setting) and all(map(callable, providers(setting)))
    assert providers("HOME_PANELS") == (assignments_panel, quizzes_panel)
    assert isinstance(provider("EXERCISE_STORE"), ExerciseStore)
    assert isinstance(provider("EXERCISE_PROGRESS"), ExerciseProgress)


@pytest.mark.django_db
def test_the_exercise_page_shows_the_notes_of_the_source_the_setting_names(
    client, learner, block_exercise
):
    client.force_login(learner)
    url = f"/exercises/{block_exercise.slug}/"
    note = f"Test note for lea on {block_exercise.slug}"
    with override_settings(EXERCISE_NOTE_SOURCES=[f"{HERE}.due_note"]):
        assert note in html(client, url)
    assert note not in html(client, url)  # the real source again


@pytest.mark.django_db
def test_the_home_page_asks_the_panels_the_setting_names_in_its_order(client, learner):
    client.force_login(learner)
    asked.clear()
    assert "Your assignments" not in html(client, "/")  # none for this learner
    panels = [f"{HERE}.first_panel", f"{HERE}.second_panel"]
    with override_settings(HOME_PANELS=panels):
        assert "Your assignments" in html(client, "/")
    assert asked == ["first", "second"]


@pytest.mark.django_db
def test_who_may_view_a_submission_is_what_the_scopes_setting_names(
    client, world, course
):
    lea_sub = submit(world.lea, course["exercises"]["ex-a"], "passed")
    url = f"/submissions/{lea_sub.pk}/"
    client.force_login(world.owner)
    html(client, url)  # her cohort's instructor may
    client.force_login(world.other)
    assert client.get(url).status_code == 404
    with override_settings(SUBMISSION_VIEWER_SCOPES=[f"{HERE}.everyone"]):
        assert client.get(url).status_code == 200
    with override_settings(SUBMISSION_VIEWER_SCOPES=[]):
        assert not submissions_visible_to(world.owner).filter(pk=lea_sub.pk)
    assert client.get(url).status_code == 404


@pytest.mark.django_db
def test_with_every_setting_empty_the_lower_layers_answer_alone(
    client, world, course, settings
):
    for setting in LISTS:
        setattr(settings, setting, [])
    settings.EXERCISE_PROGRESS = None
    del settings.EXERCISE_STORE  # absent, as well as empty
    exercise = course["exercises"]["ex-a"]
    submit(world.lea, exercise, "passed")
    assert not submissions_visible_to(world.owner).exists()
    assert exercise_notes(user=world.lea, exercise=exercise) == []
    assert home_panels(user=world.lea) == progress_panels(user=world.lea) == []
    assert exam_lock(world.lea) is None
    assert exercise_progress() is None
    with pytest.raises(RuntimeError, match="no exercise store is set"):
        exercise_store()
    client.force_login(world.lea)
    html(client, "/progress/")  # and the pages that ask still answer
    html(client, "/")


def test_a_setting_for_one_provider_refuses_two(settings):
    settings.EXERCISE_PROGRESS = [
        "grader.learner_progress.EXERCISE_PROGRESS",
        "grader.exercise_content.EXERCISE_STORE",
    ]
    with pytest.raises(ImproperlyConfigured, match="names one provider, not 2"):
        exercise_progress()
