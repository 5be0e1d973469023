"""Token scopes (issue 43): a token does what its scopes allow, no more.

Over HTTP with the Django test client and real tokens (`Authorization:
Token ...`) issued by POST /api/v1/auth/token/: a `learn` token (the default,
what `course login` asks for) cannot list or revoke the user's other tokens,
nor run an instructor's actions even when its user is an instructor; a
`teach` token can; a `manage-tokens` token lists and revokes. A browser
session is the whole account. Every API operation declares its scope (the
URL configuration and the schema are walked), and a view that declares
none refuses every token.
"""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.response import Response
from rest_framework.views import APIView

from config.urls import urlpatterns as project_urlpatterns
from quiz.core.api.base import ApiView
from quiz.core.models import ApiToken
from teaching.models import Quiz
from tests.quiz.cohort_fixtures import *  # noqa: F403
from tests.quiz.cohort_fixtures import submit
from tests.quiz.quiz_fixtures import *  # noqa: F403
from tests.quiz.quiz_fixtures import create, quiz_body, start

pytestmark = pytest.mark.django_db

PASSWORD = "pw-Secret-123"


def issue(user, *scope_names: str, name: str = "") -> dict:
    """A token for `user` over HTTP, asking for `scope_names` (none: the default)."""
    body = {"username": user.username, "password": PASSWORD, "name": name}
    if scope_names:
        body["scopes"] = list(scope_names)
    response = Client().post(
        "/api/v1/auth/token/", body, content_type="application/json"
    )
    assert response.status_code == 200, response.content
    return response.json()


def call(token: dict, method: str, url: str, body: dict | None = None):
    """One request with the token's `Authorization` header, as a script sends it."""
    kwargs = {"HTTP_AUTHORIZATION": f"Token {token['token']}"}
    if body is not None:
        kwargs.update(data=body, content_type="application/json")
    return getattr(Client(), method)(url, **kwargs)


def refused_for_lack_of(response, scope: str) -> None:
    assert response.status_code == 403, (response.status_code, response.content)
    detail = response.json()["detail"]
    assert f"lacks the '{scope}' scope" in detail, detail
    assert response.json()["scopes_needed"] == [scope]


def still_works(token: dict) -> bool:
    return call(token, "get", "/api/v1/exercises/").status_code == 200


# Issuing ---------------------------------------------------------------------


def test_a_token_asked_for_without_scopes_is_a_learn_token(learner):
    body = issue(learner)
    assert body["scopes"] == ["learn"]
    assert ApiToken.objects.get(pk=body["id"]).scopes == ["learn"]
    several = issue(learner, "manage-tokens", "learn", "learn")
    assert several["scopes"] == ["learn", "manage-tokens"]  # canonical, once each


@pytest.mark.parametrize("asked", [["admin"], [], "learn", ["learn", 3]])
def test_an_unknown_or_empty_scope_list_is_a_400_naming_the_field(learner, asked):
    response = Client().post(
        "/api/v1/auth/token/",
        {"username": "lea", "password": PASSWORD, "scopes": asked},
        content_type="application/json",
    )
    assert response.status_code == 400, response.content
    assert "scopes" in response.json()
    assert not ApiToken.objects.exists()


# Listing and revoking tokens -------------------------------------------------


def test_a_learn_token_can_neither_list_nor_revoke_the_other_tokens(learner):
    stolen = issue(learner, name="laptop")  # `course login`'s scope
    phone = issue(learner, name="phone")
    refused_for_lack_of(call(stolen, "get", "/api/v1/auth/tokens/"), "manage-tokens")
    revoke = f"/api/v1/auth/tokens/{phone['id']}/"
    refused_for_lack_of(call(stolen, "delete", revoke), "manage-tokens")
    assert still_works(phone) and still_works(stolen)


def test_a_teach_token_cannot_manage_tokens_either(instructor):
    teach = issue(instructor, "teach", "learn", name="grading script")
    other = issue(instructor, name="laptop")
    refused_for_lack_of(call(teach, "get", "/api/v1/auth/tokens/"), "manage-tokens")
    revoke = f"/api/v1/auth/tokens/{other['id']}/"
    refused_for_lack_of(call(teach, "delete", revoke), "manage-tokens")
    assert still_works(other)


def test_a_manage_tokens_token_lists_them_with_their_scopes_and_revokes_one(learner):
    manager = issue(learner, "manage-tokens", name="token manager")
    laptop = issue(learner, name="laptop")
    listed = call(manager, "get", "/api/v1/auth/tokens/")
    assert listed.status_code == 200, listed.content
    rows = {row["name"]: row for row in listed.json()}
    assert rows["token manager"]["scopes"] == ["manage-tokens"]
    assert rows["laptop"]["scopes"] == ["learn"]
    assert rows["token manager"]["current"]
    gone = call(manager, "delete", f"/api/v1/auth/tokens/{laptop['id']}/")
    assert gone.status_code == 204
    assert not still_works(laptop)
    # It holds no `learn`: a learner's own work is refused to it.
    refused_for_lack_of(call(manager, "get", "/api/v1/exercises/"), "learn")


def test_any_token_logs_itself_out_whatever_its_scopes(instructor):
    for asked in (["learn"], ["teach"], ["manage-tokens"]):
        token = issue(instructor, *asked)
        assert token["scopes"] == asked
        assert call(token, "delete", "/api/v1/auth/token/").status_code == 204
        assert not ApiToken.objects.filter(pk=token["id"]).exists()


def test_a_browser_session_is_not_bound_by_scopes(world, quiz_course):
    quiz = create(world)
    laptop = issue(world.owner, name="laptop")
    browser = Client()
    browser.force_login(world.owner)
    listed = browser.get("/api/v1/auth/tokens/")
    assert listed.status_code == 200
    assert [row["scopes"] for row in listed.json()] == [["learn"]]
    closed = browser.post(f"/api/v1/quizzes/{quiz['id']}/close/")
    assert closed.status_code == 200, closed.content
    assert browser.delete(f"/api/v1/auth/tokens/{laptop['id']}/").status_code == 204


# An instructor's tokens ------------------------------------------------------


def test_an_instructors_learn_token_is_refused_every_instructor_action(
    world, quiz_course
):
    quiz = create(world)  # made in the instructor's browser
    learn = issue(world.owner, name="laptop")  # as `course login` gets it
    cohort, q = world.cohort.pk, quiz["id"]
    closes_at = Quiz.objects.get(pk=q).closes_at
    attacks = [
        ("post", f"/api/v1/cohorts/{cohort}/quizzes/", quiz_body(title="Stolen")),
        ("post", f"/api/v1/quizzes/{q}/close/", None),
        ("get", f"/api/v1/quizzes/{q}/results/", None),
        ("patch", f"/api/v1/quizzes/{q}/", {"title": "Renamed"}),
        ("post", f"/api/v1/quizzes/{q}/regrade/", None),
        ("get", f"/api/v1/quizzes/{q}/questions/", None),
        ("get", "/api/v1/cohorts/", None),
        ("get", f"/api/v1/cohorts/{cohort}/assignments/", None),
        ("get", f"/api/v1/cohorts/{cohort}/matrix/", None),
        ("get", "/api/v1/quiz-bank/", None),
    ]
    for method, url, body in attacks:
        refused_for_lack_of(call(learn, method, url, body), "teach")
    assert Quiz.objects.filter(cohort=world.cohort).count() == 1
    unchanged = Quiz.objects.get(pk=q)
    assert unchanged.title == "Quiz 1" and unchanged.closes_at == closes_at
    # A preview shows the keys: an instructor's, so `teach` too.
    refused_for_lack_of(
        call(learn, "post", f"/api/v1/quizzes/{q}/attempts/", {}), "teach"
    )
    preview = start(world.owner, q).json()  # begun in the browser
    url = f"/api/v1/attempts/{preview['id']}/"
    refused_for_lack_of(call(learn, "get", url), "teach")
    refused_for_lack_of(call(learn, "post", f"{url}submit/"), "teach")
    # It still reads the quiz, as a learner sees it: no pools.
    seen = call(learn, "get", f"/api/v1/quizzes/{q}/")
    assert seen.status_code == 200 and "slots" not in seen.json()


def test_an_instructors_teach_token_does_the_instructors_work(world, quiz_course):
    teach = issue(world.owner, "teach", name="grading script")
    assert teach["scopes"] == ["teach"]
    cohort = world.cohort.pk
    made = call(teach, "post", f"/api/v1/cohorts/{cohort}/quizzes/", quiz_body())
    assert made.status_code == 201, made.content
    q = made.json()["id"]
    seen = call(teach, "get", f"/api/v1/quizzes/{q}/")
    assert seen.status_code == 200 and "slots" in seen.json()
    assert call(teach, "get", f"/api/v1/quizzes/{q}/results/").status_code == 200
    preview = call(teach, "post", f"/api/v1/quizzes/{q}/attempts/", {})
    assert preview.status_code == 201 and preview.json()["preview"] is True
    attempt = f"/api/v1/attempts/{preview.json()['id']}/"
    assert call(teach, "get", attempt).status_code == 200
    closed = call(teach, "post", f"/api/v1/quizzes/{q}/close/")
    assert closed.status_code == 200, closed.content
    assert call(teach, "get", "/api/v1/cohorts/").status_code == 200
    # Without `learn` it does no learner's work of its own.
    refused_for_lack_of(call(teach, "get", "/api/v1/exercises/"), "learn")


def test_a_learn_token_reads_its_own_submissions_not_a_cohorts(world, course):
    exercise = course["exercises"]["ex-a"]
    leas = submit(world.lea, exercise, "passed")
    own = submit(world.owner, exercise, "failed")
    learn = issue(world.owner)
    teach = issue(world.owner, "teach")
    assert call(learn, "get", f"/api/v1/submissions/{own.pk}/").status_code == 200
    events = f"/api/v1/submissions/{leas.pk}/events/"
    refused_for_lack_of(call(learn, "get", events), "teach")
    for part in ("", "gradescope/"):
        url = f"/api/v1/submissions/{leas.pk}/{part}"
        refused_for_lack_of(call(learn, "get", url), "teach")
        assert call(teach, "get", url).status_code == 200, url
    refused_for_lack_of(call(teach, "get", f"/api/v1/submissions/{own.pk}/"), "learn")


def test_a_learners_learn_token_takes_a_quiz(world, quiz_course):
    quiz = create(world)
    learn = issue(world.lea)
    assert learn["scopes"] == ["learn"]
    started = call(learn, "post", f"/api/v1/quizzes/{quiz['id']}/attempts/", {})
    assert started.status_code == 201, started.content
    url = f"/api/v1/attempts/{started.json()['id']}/"
    assert call(learn, "patch", url, {"flags": [1]}).status_code == 200
    assert call(learn, "post", f"{url}submit/").status_code == 200
    # A learner's `teach` token gets no further than the account allows.
    teach = issue(world.lea, "teach")
    response = call(teach, "get", f"/api/v1/quizzes/{quiz['id']}/results/")
    assert response.status_code == 403


# Every operation declares its scope ------------------------------------------

# DRF views that are not ApiViews: the schema and its docs page, public
# (AllowAny) and holding nobody's data.
PUBLIC = {SpectacularAPIView, SpectacularSwaggerSplitView}


def _routes(patterns, prefix=""):
    for entry in patterns:
        if isinstance(entry, URLResolver):
            yield from _routes(entry.url_patterns, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            yield prefix + str(entry.pattern), entry.callback


def test_every_api_view_of_the_url_conf_declares_a_scope_for_each_method():
    from quiz.core.api import scopes

    undeclared, checked = [], 0
    for route, callback in _routes(get_resolver().url_patterns):
        view = getattr(callback, "cls", None)
        if view is None or not issubclass(view, APIView):
            continue  # a Django view: it never authenticates a token
        if view in PUBLIC:
            continue
        assert issubclass(view, ApiView), f"{route}: {view.__name__} is not an ApiView"
        methods = [
            m.upper()
            for m in view.http_method_names
            if m not in ("options", "head") and hasattr(view, m)
        ]
        assert methods, route
        for method in methods:
            checked += 1
            if scopes.declared(view, method) is None:
                undeclared.append(f"{method} {route} ({view.__name__})")
    assert not undeclared, "No token scope declared: " + ", ".join(undeclared)
    assert checked >= 40  # the walk found the API


def test_the_schema_names_the_scope_of_every_operation(client):
    scopes = ("learn", "teach", "manage-tokens")
    paths = client.get("/api/v1/schema/", HTTP_ACCEPT="application/json").json()[
        "paths"
    ]
    missing = []
    for url, operations in paths.items():
        for method, operation in operations.items():
            named = operation.get("x-token-scopes")
            if not isinstance(named, list) or not set(named) <= set(scopes):
                missing.append(f"{method.upper()} {url}")
    assert not missing, missing
    assert paths["/api/v1/quizzes/{quiz_id}/close/"]["post"]["x-token-scopes"] == [
        "teach"
    ]
    assert paths["/api/v1/auth/tokens/"]["get"]["x-token-scopes"] == ["manage-tokens"]
    exercises = paths["/api/v1/exercises/"]["get"]
    assert exercises["x-token-scopes"] == ["learn"]
    assert "Token scope: `learn`." in exercises["description"]


class Undeclared(ApiView):
    """An API view someone forgot to give a scope."""

    def get(self, request):
        return Response({"secret": "the whole account"})


urlpatterns = [
    *project_urlpatterns,
    path("api/v1/undeclared/", Undeclared.as_view()),
]


@pytest.mark.urls(__name__)
def test_a_view_that_declares_no_scope_refuses_every_token(make_user):
    user = make_user("ian", "instructor")
    for asked in (["learn"], ["learn", "teach", "manage-tokens"]):
        response = call(issue(user, *asked), "get", "/api/v1/undeclared/")
        assert response.status_code == 403, response.content
        assert "takes no API token" in response.json()["detail"]
    browser = Client()
    browser.force_login(user)
    assert browser.get("/api/v1/undeclared/").json() == {"secret": "the whole account"}
