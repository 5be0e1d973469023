"""Sign up, log in, log out, and the three roles."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.urls import reverse

from quiz.roles import ADMIN, INSTRUCTOR, LEARNER, user_role

pytestmark = pytest.mark.django_db


def test_signing_up_creates_a_logged_in_learner(client):
    response = client.post(
        reverse("signup"),
        {
            "username": "newbie",
            "email": "",
            "password1": "Tr4nsformer!x",
            "password2": "Tr4nsformer!x",
        },
    )
    assert response.status_code == 302
    user = get_user_model().objects.get(username="newbie")
    assert user_role(user) == LEARNER and not user.is_staff
    assert "Signed in as newbie" in client.get(reverse("home")).content.decode()


def test_sign_up_with_mismatched_passwords_explains_and_creates_nothing(client):
    response = client.post(
        reverse("signup"),
        {
            "username": "newbie",
            "password1": "Tr4nsformer!x",
            "password2": "other-Pass-9",
        },
    )
    assert response.status_code == 200
    assert "didn’t match" in response.content.decode()
    assert not get_user_model().objects.filter(username="newbie").exists()


def test_log_in_and_log_out(client, learner):
    response = client.post(
        reverse("login"), {"username": "lea", "password": "pw-Secret-123"}
    )
    assert response.status_code == 302
    assert "Signed in as lea" in client.get(reverse("home")).content.decode()
    client.post(reverse("logout"))
    assert "Log in" in client.get(reverse("home")).content.decode()


def test_a_wrong_password_is_refused(client, learner):
    response = client.post(reverse("login"), {"username": "lea", "password": "nope"})
    assert response.status_code == 200
    assert "enter a correct username and password" in response.content.decode()


def test_roles_are_groups_with_the_right_permissions(learner, instructor, admin_user):
    assert user_role(learner) == LEARNER
    assert user_role(instructor) == INSTRUCTOR
    assert user_role(admin_user) == ADMIN
    assert instructor.has_perm("quiz.view_lesson")
    assert not instructor.has_perm("quiz.change_lesson")
    assert not learner.has_perm("quiz.view_lesson")
    staff = get_user_model().objects.get(pk=admin_user.pk)
    assert staff.is_staff


def test_demo_accounts_are_created_in_debug_only(settings):
    settings.DEBUG = False
    with pytest.raises(CommandError, match="DEBUG=1"):
        call_command("create_demo_accounts")
    settings.DEBUG = True
    call_command("create_demo_accounts")
    call_command("create_demo_accounts")  # idempotent
    users = get_user_model().objects.filter(
        username__in=["learner", "instructor", "admin"]
    )
    assert {user_role(u) for u in users} == {LEARNER, INSTRUCTOR, ADMIN}
    assert (
        get_user_model().objects.get(username="admin").check_password("admin-demo-pass")
    )
