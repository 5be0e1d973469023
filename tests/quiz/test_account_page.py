"""The account page lists the learner's API tokens and revokes them one by one."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

GOOD = "pw-Secret-123"


def issue(name: str, username: str = "lea") -> dict:
    response = APIClient().post(
        reverse("api-token"),
        {"username": username, "password": GOOD, "name": name},
        format="json",
    )
    assert response.status_code == 200, response.content
    return response.json()


def works(key: str) -> bool:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client.get(reverse("api-exercises")).status_code == 200


def test_the_account_page_needs_a_log_in(client):
    response = client.get(reverse("account"))
    assert response.status_code == 302 and "/accounts/login/" in response.url


def test_it_lists_the_tokens_and_revokes_one_with_a_form(learner):
    laptop, notebook = issue("laptop"), issue("lab notebook")
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(learner)
    page = browser.get(reverse("account"))
    html = page.content.decode()
    assert page.status_code == 200
    assert "laptop" in html and "lab notebook" in html
    assert laptop["token"][:8] in html and laptop["token"] not in html
    assert 'href="/accounts/"' in browser.get(reverse("home")).content.decode()

    action = reverse("account-token-revoke", args=[notebook["id"]])
    assert f'action="{action}"' in html
    assert browser.post(action).status_code == 403  # no CSRF token
    assert works(notebook["token"])
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html)[1]
    done = browser.post(action, {"csrfmiddlewaretoken": csrf}, follow=True)
    assert done.status_code == 200
    assert "Revoked the token “lab notebook”" in done.content.decode()
    assert not works(notebook["token"]) and works(laptop["token"])


def test_another_learners_token_cannot_be_revoked_from_the_page(
    learner, make_user, client
):
    make_user("bob", "learner")
    bobs = issue("bob's laptop", username="bob")
    client.force_login(learner)
    response = client.post(reverse("account-token-revoke", args=[bobs["id"]]))
    assert response.status_code == 404
    assert works(bobs["token"])
    assert "bob's laptop" not in client.get(reverse("account")).content.decode()


def test_the_account_page_shows_each_tokens_scopes(learner):
    """Issue 43: which token may do what, next to its name."""
    issue("laptop")  # no scopes asked for: learn
    manager = APIClient().post(
        reverse("api-token"),
        {
            "username": "lea",
            "password": GOOD,
            "name": "token manager",
            "scopes": ["manage-tokens", "learn"],
        },
        format="json",
    )
    assert manager.status_code == 200, manager.content
    browser = Client()
    browser.force_login(learner)
    html = browser.get(reverse("account")).content.decode()
    assert '<th scope="col">Scopes</th>' in html
    rows = {
        re.search(r"<td>([^<]+)</td>", row)[1]: row
        for row in re.findall(r"<tr>(.*?)</tr>", html, re.S)
        if "<td>" in row
    }
    scopes_of = {
        name: re.findall(r'<td class="token-scopes">(.*?)</td>', row)[0]
        for name, row in rows.items()
    }
    assert scopes_of == {
        "laptop": "<code>learn</code>",
        "token manager": "<code>learn</code>, <code>manage-tokens</code>",
    }
