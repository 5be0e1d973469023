"""Bad input is a clean 4xx, never a 500: fuzzed with hypothesis.

Classes covered, on the API and the HTML pages: deeply nested JSON (the
unauthenticated token endpoint too), Unicode digits that int() or isdigit()
accept oddly ("²", "١٢"), and ids past PostgreSQL's bigint in query strings
and URLs.
"""

from __future__ import annotations

import pytest
from django.test import Client
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from quiz.content.loader import content_load
from quiz.core.params import BIGINT_MAX
from teaching.cohorts import cohort_create, cohort_join

pytestmark = pytest.mark.django_db

FUZZ = hypothesis_settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)

# Digits that are not 0-9: superscripts, Arabic-Indic, fullwidth, Devanagari...
odd_digits = st.text(
    alphabet=st.sampled_from("²³¹١٢٣٠０１９५७߀𝟘⁰₀"), min_size=1, max_size=6
)
too_big = st.integers(min_value=BIGINT_MAX + 1, max_value=10**40).map(str)
junk = st.text(min_size=1, max_size=30)


def nested(depth: int, kinds: str) -> str:
    opens = "".join(
        "[" if kinds[i % len(kinds)] == "[" else '{"a":' for i in range(depth)
    )
    closes = "".join(
        "]" if kinds[i % len(kinds)] == "[" else "}" for i in reversed(range(depth))
    )
    return opens + "1" + closes


# (depth, shape, closed): bodies are built in the test to keep reports short.
deep_specs = st.tuples(
    st.one_of(st.integers(33, 3000), st.sampled_from([100_000, 200_000])),
    st.sampled_from(["[", "{", "[{", "{["]),
    st.booleans(),
)


def deep_body(spec) -> str:
    depth, kinds, closed = spec
    body = nested(depth, kinds)
    return body if closed else body[: len(body) // 2]


def assert_refused(response, body: str):
    """400 (too deep), or 413 when the body is also over the 1 MiB cap."""
    expected = 413 if len(body.encode()) > 1024 * 1024 else 400
    assert response.status_code == expected, response.content[:200]
    assert response.json()["detail"]


@pytest.fixture
def world(make_user, content_tree, block_exercise):
    content_load(root=content_tree.root)
    teacher = make_user("ian", "instructor")
    learner = make_user("lea", "learner")
    cohort = cohort_create(owner=teacher, name="Spring")
    cohort_join(cohort=cohort, user=learner)
    web_teacher, web_learner = Client(), Client()
    web_teacher.force_login(teacher)
    web_learner.force_login(learner)
    return {"cohort": cohort, "teacher": web_teacher, "learner": web_learner}


def post_json(client, url, body: str):
    return client.generic("POST", url, body, content_type="application/json")


@FUZZ
@given(spec=deep_specs)
def test_deep_json_to_the_token_endpoint_is_a_4xx(spec):
    body = deep_body(spec)
    assert_refused(post_json(Client(), "/api/v1/auth/token/", body), body)


@FUZZ
@given(spec=deep_specs)
def test_deep_json_to_the_submission_endpoint_is_a_4xx(world, spec):
    body = deep_body(spec)
    url = "/api/v1/exercises/block-param-count/submissions/"
    assert_refused(post_json(world["learner"], url, body), body)


def test_the_exact_attack_body_is_a_400_naming_the_depth():
    response = post_json(Client(), "/api/v1/auth/token/", "[" * 100_000)
    assert response.status_code == 400
    assert "deeper than 32 levels" in response.json()["detail"]


def test_shallow_json_still_works(world):
    # 32 levels is the bound: a real body is never close, and still parses.
    response = post_json(Client(), "/api/v1/auth/token/", nested(32, "["))
    assert response.status_code == 400  # a list is not a token request...
    assert "nests" not in response.json().get("detail", "")  # ...but it parsed


@FUZZ
@given(value=st.one_of(odd_digits, too_big, st.just("-1"), st.just("1e3")))
def test_odd_checked_ids_on_a_lesson_page_are_a_400(world, value):
    response = world["learner"].get("/lessons/first-lesson/", {"checked": value})
    assert response.status_code == 400
    assert "First Lesson" in response.content.decode()


@FUZZ
@given(value=junk)
def test_any_checked_value_on_a_lesson_page_is_never_a_500(world, value):
    response = world["learner"].get("/lessons/first-lesson/", {"checked": value})
    assert response.status_code in (200, 400)


@FUZZ
@given(
    value=st.one_of(odd_digits, too_big, junk),
    name=st.sampled_from(["learner", "limit"]),
)
def test_odd_filters_on_the_cohort_submissions_api_are_a_400(world, value, name):
    url = f"/api/v1/cohorts/{world['cohort'].pk}/submissions/"
    response = world["teacher"].get(url, {name: value})
    if value.isascii() and value.isdigit() and int(value) <= BIGINT_MAX:
        assert response.status_code in (200, 400)  # a real number, maybe 0
    else:
        assert response.status_code == 400, value
        assert name in response.json()


@FUZZ
@given(big=st.integers(min_value=BIGINT_MAX + 1, max_value=10**40))
def test_ids_past_bigint_in_instructor_urls_are_a_404(world, big):
    cohort = world["cohort"].pk
    teacher = world["teacher"]
    for url in [
        f"/instructor/cohorts/{cohort}/learners/{big}/",
        f"/instructor/cohorts/{cohort}/learners/{big}/remove/",
        f"/instructor/cohorts/{big}/",
        f"/instructor/cohorts/{big}/learners/1/",
        f"/instructor/cohorts/{big}/analytics/",
        f"/api/v1/cohorts/{big}/matrix/",
    ]:
        assert teacher.get(url).status_code == 404, url
    assert (
        teacher.post(f"/instructor/cohorts/{cohort}/learners/{big}/remove/").status_code
        == 404
    )


@FUZZ
@given(
    query=st.dictionaries(
        st.sampled_from(["checked", "rated", "learner", "section", "sort", "limit"]),
        st.one_of(odd_digits, too_big, junk),
        max_size=3,
    ),
    page=st.sampled_from(
        [
            "/",
            "/lessons/first-lesson/",
            "/exercises/block-param-count/",
            "/progress/",
            "/review/",
            "/instructor/",
            "/instructor/cohorts/{c}/",
            "/instructor/cohorts/{c}/analytics/",
            "/instructor/cohorts/{c}/progress.csv",
            "/api/v1/cohorts/{c}/matrix/",
            "/api/v1/cohorts/{c}/submissions/",
        ]
    ),
)
def test_no_query_string_makes_a_page_fail(world, query, page):
    url = page.format(c=world["cohort"].pk)
    client = (
        world["teacher"]
        if "cohorts/" in url or "instructor" in url
        else world["learner"]
    )
    response = client.get(url, query)
    assert response.status_code < 500, (url, query)


def test_too_many_query_fields_is_a_json_400_on_the_api(world):
    query = "&".join(f"f{i}=1" for i in range(1100))
    url = f"/api/v1/cohorts/{world['cohort'].pk}/submissions/?{query}"
    response = world["teacher"].get(url)
    assert response.status_code == 400
    assert response.json() == {"detail": "Bad request."}
    page = world["learner"].get(f"/lessons/first-lesson/?{query}")
    assert page.status_code == 400
