"""Sign up, log in, log out, and the three roles."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.urls import reverse

from quiz.core.accounts import USERNAME_MIXED_SCRIPTS, USERNAME_UNAVAILABLE
from quiz.core.roles import ADMIN, INSTRUCTOR, LEARNER, user_role

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


@pytest.mark.parametrize(
    ("next_url", "lands_on"),
    [
        ("/exercises/", "/exercises/"),
        ("/lessons/x/?a=1#q-3", "/lessons/x/?a=1#q-3"),
        ("https://evil.example/", "/"),  # another site: home instead
        ("//evil.example/", "/"),
        ("", "/"),
    ],
)
def test_sign_up_returns_to_a_safe_next_like_log_in(client, next_url, lands_on):
    form = client.get(reverse("signup"), {"next": next_url}).content.decode()
    if lands_on != "/":
        assert 'name="next"' in form
    response = client.post(
        reverse("signup"),
        {
            "username": "newbie",
            "password1": "Tr4nsformer!x",
            "password2": "Tr4nsformer!x",
            "next": next_url,
        },
    )
    assert response.status_code == 302 and response.url == lands_on


def test_the_header_links_carry_the_page_to_come_back_to(client):
    html = client.get("/exercises/").content.decode()
    assert 'href="/accounts/signup/?next=/exercises/"' in html
    assert 'href="/accounts/login/?next=/exercises/"' in html


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


def sign_up(client, username):
    return client.post(
        reverse("signup"),
        {
            "username": username,
            "password1": "Tr4nsformer!x",
            "password2": "Tr4nsformer!x",
        },
    )


def refusal(response) -> str:
    assert response.status_code == 200
    errors = response.context["form"].errors["username"]
    assert len(errors) == 1
    return errors[0]


def test_a_taken_name_and_a_free_looking_reserved_name_get_the_same_answer(
    client, learner
):
    taken = refusal(sign_up(client, "lea"))
    reserved = refusal(sign_up(client, "administrator"))
    assert taken == reserved == USERNAME_UNAVAILABLE
    assert "exist" not in taken and "taken" not in taken
    body = sign_up(client, "lea").content.decode()
    assert "already exists" not in body
    assert get_user_model().objects.filter(username="lea").count() == 1


@pytest.mark.parametrize(
    "look_alike",
    [
        "\u0430dmin",  # Cyrillic а
        "Admin",  # case
        "\uff41dmin",  # fullwidth a, NFKC folds it
        "adrnin",  # rn reads as m
    ],
)
def test_names_that_look_like_a_reserved_name_are_refused(client, look_alike):
    assert refusal(sign_up(client, look_alike)) in (
        USERNAME_UNAVAILABLE,
        USERNAME_MIXED_SCRIPTS,
    )
    assert get_user_model().objects.count() == 0


def test_a_look_alike_of_an_existing_user_gets_the_generic_answer(client, make_user):
    make_user("paypal")
    for look_alike in ["PayPal", "paypa1", "p\u0430ypal", "p\u0430yp\u0430l"]:
        message = refusal(sign_up(client, look_alike))
        assert message in (USERNAME_UNAVAILABLE, USERNAME_MIXED_SCRIPTS)
    assert refusal(sign_up(client, "paypa1")) == USERNAME_UNAVAILABLE
    make_user("coco")
    whole_script = "\u0441\u043e\u0441\u043e"  # Cyrillic only, reads "coco"
    assert refusal(sign_up(client, whole_script)) == USERNAME_UNAVAILABLE
    assert get_user_model().objects.count() == 2


def test_mixed_script_names_are_refused_with_a_clear_message(client):
    message = refusal(sign_up(client, "ivan\u0438"))  # Latin + Cyrillic и
    assert message == USERNAME_MIXED_SCRIPTS and "alphabet" in message
    assert not get_user_model().objects.exists()


def test_single_script_names_in_other_alphabets_sign_up(client):
    assert sign_up(client, "\u0438\u0432\u0430\u043d").status_code == 302  # иван
    assert get_user_model().objects.filter(username="иван").exists()


def test_the_service_itself_vets_names(make_user):
    from django.core.exceptions import ValidationError

    from quiz.core.accounts import user_signup

    make_user("lea")
    for name in ["lea", "LEA", "1ea", "\u0430dmin", "root"]:
        with pytest.raises(ValidationError):
            user_signup(username=name, password="Tr4nsformer!x")
    assert user_signup(username="leah", password="Tr4nsformer!x").username == "leah"
