"""LTI 1.3 launches from a real (simulated) platform, over HTTP, end to end.

The platform signs id_tokens with its own keys and serves its JWKS; the tool
runs in Django's live server. Good launches sign people in with the right
role and course; each bad one gets a clear 4xx page and creates nothing.
"""

from __future__ import annotations

import time

import pytest
import requests
from django.contrib.auth import get_user_model
from lti_tool.models import LtiUser

from lms.models import LmsAccount, LmsCourse
from quiz.core.roles import user_role
from teaching.models import Cohort, CohortMembership
from tests.lms.platform import INSTRUCTOR, LEARNER, rsa_key

pytestmark = pytest.mark.django_db(transaction=True)
User = get_user_model()


def signed_in_as(session: requests.Session, url: str) -> str:
    page = session.get(url)
    assert page.status_code == 200, page.text[:300]
    marker = "Signed in as "
    assert marker in page.text, "not signed in"
    return page.text.split(marker, 1)[1].split("<", 1)[0].strip()


def test_an_instructor_launch_signs_in_makes_the_cohort_and_syncs_the_roster(
    platform, tool, browser_session
):
    platform.members = [
        {"user_id": "t-1", "name": "Tess Teacher", "roles": [INSTRUCTOR], "status": "Active"},  # noqa: E501
        {"user_id": "s-1", "name": "Sam Student", "roles": [LEARNER], "status": "Active"},  # noqa: E501
        {"user_id": "s-2", "name": "Kim Student", "roles": ["Learner"]},
        {"user_id": "s-3", "name": "Gone Student", "roles": [LEARNER], "status": "Inactive"},  # noqa: E501
    ]  # fmt: skip
    response, _ = platform.launch(
        browser_session, tool, sub="t-1", roles=[INSTRUCTOR], name="Tess Teacher"
    )
    assert response.status_code == 302
    teacher = LmsAccount.objects.get(issuer=platform.issuer, sub="t-1").user
    assert user_role(teacher) == "instructor"
    assert signed_in_as(browser_session, tool + response.headers["Location"]) == (
        teacher.username
    )
    cohort = LmsCourse.objects.get().cohort
    assert (cohort.name, cohort.owner) == ("Transformers 101", teacher)
    # The roster came in at the launch: active learners joined, with accounts.
    members = set(
        CohortMembership.objects.filter(cohort=cohort).values_list(
            "user__lms_accounts__sub", flat=True
        )
    )
    assert members == {"s-1", "s-2"}
    assert user_role(LmsAccount.objects.get(sub="s-1").user) == "learner"
    assert (
        "Authorization"
        in next(r for r in platform.requests if r.path.endswith("/memberships")).headers
    )


def test_a_learner_launch_lands_on_the_linked_exercise_signed_in(
    platform, tool, block_exercise
):
    with requests.Session() as teacher:
        platform.launch(teacher, tool, sub="t-1", roles=[INSTRUCTOR])
    with requests.Session() as learner:
        response, _ = platform.launch(
            learner, tool, sub="s-9", roles=[LEARNER], name="Ada Learner",
            custom={"resource": "exercise:block-param-count"},
        )  # fmt: skip
        assert response.status_code == 302
        assert response.headers["Location"] == "/exercises/block-param-count/"
        username = signed_in_as(learner, tool + response.headers["Location"])
    user = User.objects.get(username=username)
    assert username.startswith("ada-learner-")
    assert user_role(user) == "learner" and not user.has_usable_password()
    assert LtiUser.objects.get(sub="s-9").auth_user == user
    assert CohortMembership.objects.filter(
        cohort=LmsCourse.objects.get().cohort, user=user
    ).exists()


def test_a_link_to_a_lesson_page_lands_there(platform, tool, content_tree):
    from quiz.content.loader import content_load
    from quiz.models import Lesson

    content_load(root=content_tree.root)
    lesson = Lesson.objects.order_by("pk").first()
    with requests.Session() as learner:
        # As an LMS admin would type it: the page itself as the target link.
        response, _ = platform.launch(
            learner, tool, sub="s-1", roles=[LEARNER],
            target_link_uri=tool + f"/lessons/{lesson.slug}/",
        )  # fmt: skip
        assert response.headers["Location"] == f"/lessons/{lesson.slug}/"
        assert signed_in_as(learner, tool + response.headers["Location"])


def test_the_same_lms_user_is_the_same_account_every_time(platform, tool):
    for _ in range(2):
        with requests.Session() as learner:
            response, _ = platform.launch(learner, tool, sub="s-1", roles=[LEARNER])
            assert response.status_code == 302
    assert LmsAccount.objects.filter(sub="s-1").count() == 1
    assert User.objects.count() == 1


def test_a_learner_who_came_first_joins_the_cohort_when_it_is_made(platform, tool):
    no_roster = _drop("https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice")
    with requests.Session() as learner:
        platform.launch(learner, tool, sub="s-1", roles=[LEARNER], edit=no_roster)
    assert not Cohort.objects.exists()  # no instructor yet: nobody to own it
    with requests.Session() as teacher:
        platform.launch(teacher, tool, sub="t-1", roles=[INSTRUCTOR], edit=no_roster)
    cohort = LmsCourse.objects.get().cohort
    assert cohort.memberships.get().user.lms_accounts.get().sub == "s-1"


def test_a_second_instructor_teaches_the_same_cohort(platform, tool):
    for sub in ("t-1", "t-2"):
        with requests.Session() as teacher:
            platform.launch(teacher, tool, sub=sub, roles=[INSTRUCTOR])
    cohort = LmsCourse.objects.get().cohort
    second = LmsAccount.objects.get(sub="t-2").user
    assert list(cohort.instructors.all()) == [second]
    with requests.Session() as teacher:
        response, _ = platform.launch(teacher, tool, sub="t-2", roles=[INSTRUCTOR])
        page = teacher.get(tool + f"/instructor/cohorts/{cohort.pk}/")
    assert page.status_code == 200 and "Transformers 101" in page.text


# -- refused launches -----------------------------------------------------


def _drop(*names):
    def edit(claims):
        for name in names:
            claims.pop(name)
        return claims

    return edit


BAD_LAUNCHES = {
    "bad signature": (
        lambda p: lambda c: (c, p.sign(c, key=rsa_key())),
        "signature does not match",
    ),
    "wrong aud": (lambda p: lambda c: {**c, "aud": "someone-else"}, "not registered"),
    "expired": (
        lambda p: lambda c: {**c, "exp": int(time.time()) - 60, "iat": int(time.time()) - 400},  # noqa: E501
        "expired",
    ),
    "unknown deployment": (
        lambda p: lambda c: {**c, "https://purl.imsglobal.org/spec/lti/claim/deployment_id": "rogue"},  # noqa: E501
        "deployment",
    ),
    "no sub": (lambda p: _drop("sub"), "missing required information"),
    "no roles": (
        lambda p: _drop("https://purl.imsglobal.org/spec/lti/claim/roles"),
        "missing required information",
    ),
    "no exp": (lambda p: _drop("exp"), "missing required information"),
    "no resource link": (
        lambda p: _drop("https://purl.imsglobal.org/spec/lti/claim/resource_link"),
        "missing required information",
    ),
    "no message type": (
        lambda p: _drop("https://purl.imsglobal.org/spec/lti/claim/message_type"),
        "no LTI message type",
    ),
    # A nonce this tool never handed out is not a replay: say so.
    "nonce never issued": (
        lambda p: lambda c: {**c, "nonce": "never-issued-by-the-tool"},
        "not one this tool issued",
    ),
    # A clock ahead is not a forged signature.
    "iat in the future": (
        lambda p: lambda c: {**c, "iat": int(time.time()) + 600, "exp": int(time.time()) + 900},  # noqa: E501
        "issued in the future",
    ),
    "wrong azp": (
        lambda p: lambda c: {**c, "azp": "another-tool"},
        "authorized party (azp) is another tool",
    ),
    "several audiences, no azp": (
        lambda p: lambda c: {**c, "aud": [p.client_id, "another-tool"]},
        "names no authorized party (azp)",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(BAD_LAUNCHES))
def test_a_bad_launch_gets_a_clear_4xx_and_creates_nothing(
    platform, tool, browser_session, case
):
    make_edit, words = BAD_LAUNCHES[case]
    response, _ = platform.launch(
        browser_session, tool, sub="s-1", roles=[LEARNER], edit=make_edit(platform)
    )
    assert 400 <= response.status_code < 500
    assert words.lower() in response.text.lower()
    assert "Traceback" not in response.text
    assert not User.objects.exists()
    assert not Cohort.objects.exists() and not LmsCourse.objects.exists()
    assert not LtiUser.objects.exists() and not LmsAccount.objects.exists()
    assert "sessionid" not in browser_session.cookies


@pytest.mark.parametrize(
    "audience",
    [
        pytest.param(lambda p: {"azp": p.client_id}, id="azp alone"),
        pytest.param(
            lambda p: {"aud": [p.client_id, "another-tool"], "azp": p.client_id},
            id="several audiences with azp",
        ),
    ],
)
def test_an_azp_naming_this_tool_is_accepted(platform, tool, browser_session, audience):
    response, _ = platform.launch(
        browser_session, tool, sub="s-1", roles=[LEARNER],
        edit=lambda c: {**c, **audience(platform)},
    )  # fmt: skip
    assert response.status_code == 302, response.text[:300]
    assert LmsAccount.objects.filter(sub="s-1").exists()


def test_a_platform_key_rotation_is_picked_up_at_once(platform, tool):
    with requests.Session() as first:
        response, _ = platform.launch(first, tool, sub="s-1", roles=[LEARNER])
        assert response.status_code == 302
    assert platform.jwks_fetches == 1  # now cached for 5 minutes
    platform.rotate_key()
    with requests.Session() as second:
        response, _ = platform.launch(second, tool, sub="s-2", roles=[LEARNER])
    assert response.status_code == 302, response.text[:300]
    assert platform.jwks_fetches == 2  # one refetch, for the unknown kid
    with requests.Session() as third:
        response, _ = platform.launch(third, tool, sub="s-3", roles=[LEARNER])
    assert response.status_code == 302
    assert platform.jwks_fetches == 2  # the new set is cached again


def test_unknown_kids_refetch_the_jwks_at_most_once_per_interval(platform, tool):
    def stranger_key(kid):
        key = rsa_key()
        return lambda c: (c, platform.sign(c, key=key, kid=kid))

    for n in range(3):
        with requests.Session() as browser:
            response, _ = platform.launch(
                browser, tool, sub="s-1", roles=[LEARNER], edit=stranger_key(f"x-{n}")
            )
        assert response.status_code == 400
        assert "a key the platform does not publish" in response.text
    # The first launch fetched the set and refetched it once for its unknown
    # kid; the next unknown kids, within 30 s, fetch nothing.
    assert platform.jwks_fetches == 2
    assert not User.objects.exists()


def test_a_replayed_launch_is_refused(platform, tool, browser_session):
    first, form = platform.launch(browser_session, tool, sub="s-1", roles=[LEARNER])
    assert first.status_code == 302
    users = User.objects.count()
    with requests.Session() as attacker:
        attacker.cookies.update(browser_session.cookies)
        again = attacker.post(tool + "/lti/launch/", data=form, allow_redirects=False)
    assert again.status_code == 400
    assert "already used" in again.text
    assert User.objects.count() == users


def test_a_launch_without_its_login_is_refused(platform, tool):
    token = platform.sign(
        platform.claims(sub="s-1", roles=[LEARNER], nonce="never-issued")
    )
    with requests.Session() as stranger:
        response = stranger.post(
            tool + "/lti/launch/", data={"id_token": token, "state": "state-made-up"}
        )
    assert response.status_code == 400
    assert "did not start here" in response.text
    assert not User.objects.exists()


def test_a_login_from_an_unregistered_platform_is_refused(platform, tool):
    response = requests.get(
        tool + "/lti/login/",
        params={
            "iss": "https://rogue.example", "login_hint": "x",
            "target_link_uri": tool + "/lti/launch/", "client_id": "nobody",
        },
        allow_redirects=False,
    )  # fmt: skip
    assert response.status_code == 400
    assert "not registered" in response.text


def test_the_jwks_lists_every_active_key_and_rotation_adds_one(tool, db):
    from django.core.management import call_command
    from lti_tool.models import Key

    first = requests.get(tool + "/lti/jwks/").json()["keys"]
    assert len(first) == 1 and first[0]["kty"] == "RSA" and first[0]["alg"] == "RS256"
    assert "d" not in first[0]  # public parts only
    call_command("rotate_keys", "--deactivate-after", "0")
    second = requests.get(tool + "/lti/jwks/").json()["keys"]
    assert len(second) == 1 and second[0]["kid"] != first[0]["kid"]
    assert Key.objects.filter(is_active=False).count() == 1
