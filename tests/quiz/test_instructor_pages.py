"""Instructor pages and the learner's join pages: roles, content, query counts."""

from __future__ import annotations

import csv
import io
import re

import pytest
from django.urls import reverse

from teaching.cohorts import cohort_join
from teaching.models import Cohort, CohortMembership
from tests.quiz.cohort_fixtures import *  # noqa: F403
from tests.quiz.cohort_fixtures import answer, read, submit

pytestmark = pytest.mark.django_db

ROLES = ["anonymous", "learner", "other", "owner", "superuser"]
# What each role gets from a page about `world.cohort`.
COHORT_PAGE = {
    "anonymous": "login",
    "learner": 403,
    "other": 404,
    "owner": 200,
    "superuser": 200,
}
COHORT_PAGES = [
    ("instructor-cohort", lambda w: [w.cohort.pk]),
    ("instructor-learner", lambda w: [w.cohort.pk, w.lea.pk]),
    ("instructor-member-remove", lambda w: [w.cohort.pk, w.lea.pk]),
    ("instructor-analytics", lambda w: [w.cohort.pk]),
    ("instructor-matrix-csv", lambda w: [w.cohort.pk]),
    ("instructor-submissions-csv", lambda w: [w.cohort.pk]),
]


def _as(client, world, role):
    user = world.by_role(role)
    if user is not None:
        client.force_login(user)
    return client


def _check(response, expected, url):
    if expected == "login":
        assert response.status_code == 302
        assert response.url.startswith(reverse("login") + "?next=")
        assert url in response.url or url.replace("/", "%2F") in response.url
    else:
        assert response.status_code == expected


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize(("name", "args"), COHORT_PAGES)
def test_cohort_pages_by_role(client, world, course, role, name, args):
    url = reverse(name, args=args(world))
    _check(_as(client, world, role).get(url), COHORT_PAGE[role], url)


@pytest.mark.parametrize(
    ("role", "expected"),
    [
        ("anonymous", "login"),
        ("learner", 403),
        ("other", 200),
        ("owner", 200),
        ("superuser", 200),
    ],
)
def test_the_cohort_list_by_role(client, world, role, expected):
    url = reverse("instructor-cohorts")
    response = _as(client, world, role).get(url)
    _check(response, expected, url)
    if expected == 200:
        html = response.content.decode()
        assert ("Spring 2026" in html) == (role in ("owner", "superuser"))
        assert ("Other group" in html) == (role in ("other", "superuser"))


@pytest.mark.parametrize("role", ROLES)
def test_removing_a_member_by_role(client, world, role):
    url = reverse("instructor-member-remove", args=[world.cohort.pk, world.lea.pk])
    response = _as(client, world, role).post(url)
    _check(response, {**COHORT_PAGE, "owner": 302, "superuser": 302}[role], url)
    still_member = CohortMembership.objects.filter(
        cohort=world.cohort, user=world.lea
    ).exists()
    assert still_member == (role not in ("owner", "superuser"))


@pytest.mark.parametrize(
    ("role", "expected"),
    [("anonymous", "login"), ("learner", 403), ("other", 200), ("superuser", 302)],
)
def test_creating_a_cohort_by_role(client, world, role, expected):
    url = reverse("instructor-cohorts")
    response = _as(client, world, role).post(url, {"name": "New one"})
    if role == "other":  # an instructor creates their own
        assert response.status_code == 302
        assert Cohort.objects.get(name="New one").owner == world.other
        return
    _check(response, expected, url)
    assert Cohort.objects.filter(name="New one").exists() == (role == "superuser")


def test_an_owner_cannot_reach_a_learner_outside_the_cohort(client, world, course):
    client.force_login(world.owner)
    for user in (world.max, world.outsider):
        for name in ("instructor-learner", "instructor-member-remove"):
            url = reverse(name, args=[world.cohort.pk, user.pk])
            assert client.get(url).status_code == 404
    assert client.get(reverse("instructor-cohort", args=[99999])).status_code == 404


def test_an_instructor_can_open_their_learners_submission_page_only(
    client, world, course
):
    lea_sub = submit(world.lea, course["exercises"]["ex-a"], "passed")
    url = reverse("submission", args=[lea_sub.pk])
    client.force_login(world.owner)
    assert client.get(url).status_code == 200
    client.force_login(world.other)
    assert client.get(url).status_code == 404
    client.force_login(world.leo)
    assert client.get(url).status_code == 404
    client.force_login(world.lea)
    assert client.get(url).status_code == 200


# Creating and inviting ------------------------------------------------------------


def test_an_instructor_creates_a_cohort_and_sees_its_code_and_absolute_link(
    client, world
):
    client.force_login(world.other)
    response = client.post(reverse("instructor-cohorts"), {"name": "Autumn"})
    cohort = Cohort.objects.get(name="Autumn")
    assert response.url == reverse("instructor-cohort", args=[cohort.pk])
    html = client.get(response.url).content.decode()
    link = "http://testserver" + reverse("cohort-join", args=[cohort.join_code])
    assert f'id="join-link" href="{link}"' in html
    assert cohort.join_code in html
    assert "Created Autumn" in html
    assert "Nobody has joined yet" in html


def test_the_join_link_wraps_only_between_its_parts(client, world):
    """On a phone the link must wrap, but never inside the join code or the
    port ("M6VB273 / 8/" broke the axe run's numbers check): each part is
    unbreakable, with a break opportunity after each slash."""
    import re

    client.force_login(world.other)
    client.post(reverse("instructor-cohorts"), {"name": "Autumn"})
    cohort = Cohort.objects.get(name="Autumn")
    html = client.get(reverse("instructor-cohort", args=[cohort.pk])).content.decode()
    link_html = re.search(r'<a id="join-link"[^>]*>(.*?)</a>', html).group(1)
    assert link_html == (
        '<span class="url-part">http://testserver/</span><wbr>'
        '<span class="url-part">cohorts/</span><wbr>'
        '<span class="url-part">join/</span><wbr>'
        f'<span class="url-part">{cohort.join_code}/</span>'
    )
    form_link = '<span class="url-part">http://testserver/</span><wbr>'
    assert f'{form_link}<span class="url-part">cohorts/</span>' in html


def test_a_blank_cohort_name_is_explained_not_saved(client, world):
    client.force_login(world.other)
    response = client.post(reverse("instructor-cohorts"), {"name": "  "})
    assert response.status_code == 200
    assert "Give the cohort a name." in response.content.decode()
    assert Cohort.objects.filter(owner=world.other).count() == 1


def test_removing_asks_first_then_removes(client, world):
    client.force_login(world.owner)
    url = reverse("instructor-member-remove", args=[world.cohort.pk, world.lea.pk])
    html = client.get(url).content.decode()
    assert "Remove lea?" in html and 'method="post"' in html
    assert CohortMembership.objects.filter(user=world.lea).exists()
    response = client.post(url, follow=True)
    assert "Removed lea from Spring 2026." in response.content.decode()
    assert not CohortMembership.objects.filter(user=world.lea).exists()
    assert client.get(url).status_code == 404


# Joining as a learner ---------------------------------------------------------------


def test_the_join_link_needs_a_login_and_comes_back(client, world):
    url = reverse("cohort-join", args=[world.cohort.join_code])
    response = client.get(url)
    assert response.status_code == 302
    assert response.url == f"{reverse('login')}?next={url}"
    form = reverse("cohort-join-form")
    assert client.get(form).url == f"{reverse('login')}?next={form}"


def test_a_learner_joins_through_the_link(client, world):
    client.force_login(world.outsider)
    url = reverse("cohort-join", args=[world.cohort.join_code])
    html = client.get(url).content.decode()
    assert "Spring 2026" in html and 'id="join-button"' in html
    assert not CohortMembership.objects.filter(user=world.outsider).exists()
    html = client.post(url, follow=True).content.decode()
    assert "You joined Spring 2026." in html and 'id="joined"' in html
    assert CohortMembership.objects.filter(
        cohort=world.cohort, user=world.outsider
    ).exists()
    html = client.post(url, follow=True).content.decode()
    assert "You are already in Spring 2026." in html


def test_a_typed_code_leads_to_the_join_page(client, world):
    client.force_login(world.outsider)
    code = world.cohort.join_code.lower()
    response = client.post(reverse("cohort-join-form"), {"code": f" {code} "})
    assert response.url == reverse("cohort-join", args=[world.cohort.join_code])


def test_a_wrong_code_is_explained(client, world):
    client.force_login(world.outsider)
    response = client.post(reverse("cohort-join-form"), {"code": "NOPE"})
    assert response.status_code == 400
    assert "No cohort has that code" in response.content.decode()
    assert client.get(reverse("cohort-join", args=["NOPE"])).status_code == 404


def test_the_owner_is_told_not_to_join_their_own_cohort(client, world):
    client.force_login(world.owner)
    url = reverse("cohort-join", args=[world.cohort.join_code])
    html = client.post(url).content.decode()
    assert "You own this cohort" in html
    assert not CohortMembership.objects.filter(user=world.owner).exists()


# The matrix page -------------------------------------------------------------------


def _row(html: str, username: str) -> str:
    start = html.index(f'<tr data-learner="{username}">')
    return html[start : html.index("</tr>", start)]


def _cell_text(row_html: str, lesson: str) -> str:
    start = row_html.index(f'data-lesson="{lesson}"')
    cell = row_html[start : row_html.index("</td>", start)]
    return " ".join(re.sub(r"<[^>]+>", " ", cell.split(">", 1)[1]).split())


def test_the_matrix_page_shows_each_cell(client, world, course):
    first = course["lessons"]["first-lesson"]
    read(world.lea, first)
    answer(world.lea, first.questions.first(), True)
    submit(world.lea, course["exercises"]["ex-a"], "passed")
    client.force_login(world.owner)
    html = client.get(reverse("instructor-cohort", args=[world.cohort.pk])).content
    html = html.decode()
    assert _cell_text(_row(html, "lea"), "first-lesson") == (
        "✓ read, 1/3 self-checks right, 1/2 exercises passed"
    )
    assert _cell_text(_row(html, "leo"), "first-lesson") == (
        "· not read, 0/3 self-checks right, 0/2 exercises passed"
    )
    assert "Basics" in html and "Advanced" in html
    assert "max" not in _row_names(html)


def _row_names(html: str) -> list[str]:
    return re.findall(r'<tr data-learner="([^"]+)">', html)


def test_the_matrix_page_sorts_and_filters_with_plain_links(client, world, course):
    submit(world.leo, course["exercises"]["ex-c"], "passed")
    client.force_login(world.owner)
    url = reverse("instructor-cohort", args=[world.cohort.pk])
    html = client.get(url).content.decode()
    assert _row_names(html) == ["lea", "leo"]
    assert 'href="?sort=-learner"' in html  # clicking again reverses
    assert 'href="?sort=third-lesson"' in html
    html = client.get(url + "?sort=-third-lesson").content.decode()
    assert _row_names(html) == ["leo", "lea"]
    assert 'href="?sort=third-lesson"' in html  # now toggles back
    html = client.get(url + "?section=advanced&sort=-exercises").content.decode()
    assert _row_names(html) == ["leo", "lea"]
    assert 'data-lesson="third-lesson"' in html
    assert 'data-lesson="first-lesson"' not in html
    assert 'href="?sort=exercises&amp;section=advanced"' in html


def test_an_unknown_section_shows_everything_and_says_so(client, world, course):
    client.force_login(world.owner)
    url = reverse("instructor-cohort", args=[world.cohort.pk]) + "?section=nope"
    html = client.get(url).content.decode()
    assert "No section named &#x27;nope&#x27;. Showing every section." in html
    assert 'data-lesson="first-lesson"' in html


def test_the_learner_drill_down_shows_submissions_and_answers(client, world, course):
    checks = [
        {
            "name": "head is wte",
            "passed": False,
            "diagnosis": "copied-wte",
            "message": "you copied wte instead of sharing it",
        },
        {"name": "shape", "passed": True, "message": ""},
    ]
    submit(
        world.lea,
        course["exercises"]["ex-a"],
        "failed",
        checks=checks,
        code="def f():\n    return '<b>'\n",
    )
    answer(world.lea, course["lessons"]["second-lesson"].questions.first(), False)
    submit(world.leo, course["exercises"]["ex-b"], "passed")
    client.force_login(world.owner)
    html = client.get(
        reverse("instructor-learner", args=[world.cohort.pk, world.lea.pk])
    ).content.decode()
    assert "head is wte" in html and "copied-wte" in html
    assert "you copied wte instead of sharing it" in html
    assert "return &#x27;&lt;b&gt;&#x27;" in html  # code shown, escaped
    assert "Pick one." in html and "wrong" in html
    assert "Ex B" not in html  # leo's work is not on lea's page


def test_the_analytics_page_has_tables_charts_and_a_no_js_fallback(
    client, world, course
):
    ex = course["exercises"]
    diagnosed = [{"name": "c", "passed": False, "diagnosis": "copied-wte"}]
    submit(world.lea, ex["ex-a"], "failed", checks=diagnosed, minutes_ago=5)
    submit(world.lea, ex["ex-a"], "passed")
    client.force_login(world.owner)
    html = client.get(
        reverse("instructor-analytics", args=[world.cohort.pk])
    ).content.decode()
    start = html.index('<tr data-exercise="ex-a">')
    row = html[start : html.index("</tr>", start)]
    assert '<td data-col="attempts">2</td>' in row
    assert "100% (1 of 1)" in row
    assert '<td data-col="median">2</td>' in row
    assert "<code>copied-wte</code> × 1 (1 learner)" in row
    assert 'id="chart-data"' in html and "vendor/chart.umd.js" in html
    assert 'id="exercise-chart"' in html and 'id="diagnosis-chart"' in html
    assert '"labels": ["Ex A: copied-wte"], "counts": [1]' in html
    assert "js/instructor.js" in html


def test_the_csv_downloads_are_named_csv_files(client, world, course):
    submit(world.lea, course["exercises"]["ex-a"], "passed")
    client.force_login(world.owner)
    for name, what in [
        ("instructor-matrix-csv", "progress"),
        ("instructor-submissions-csv", "submissions"),
    ]:
        response = client.get(reverse(name, args=[world.cohort.pk]))
        assert response["Content-Type"] == "text/csv; charset=utf-8"
        assert response["Content-Disposition"] == (
            f'attachment; filename="spring-2026-{world.cohort.pk}-{what}.csv"'
        )
        rows = list(csv.reader(io.StringIO(response.content.decode())))
        assert len(rows) == (3 if what == "progress" else 2)


# Query counts -----------------------------------------------------------------------


def _populate(world, course, make_user, n: int):
    """`n` learners in the cohort, each with reads, answers and submissions."""
    ex = course["exercises"]
    questions = list(course["lessons"]["first-lesson"].questions.all())
    for i in range(n - 2):  # lea and leo are already members
        user = make_user(f"learner{i}", "learner")
        cohort_join(cohort=world.cohort, user=user)
    for membership in world.cohort.memberships.select_related("user"):
        user = membership.user
        read(user, course["lessons"]["first-lesson"])
        for q in questions:
            answer(user, q, True)
        submit(
            user,
            ex["ex-a"],
            "failed",
            checks=[{"name": "x", "passed": False, "diagnosis": "d"}],
        )
        submit(user, ex["ex-a"], "passed")


@pytest.mark.parametrize("learners", [2, 10])
@pytest.mark.parametrize(
    "name",
    [
        "instructor-cohort",
        "instructor-analytics",
        "instructor-matrix-csv",
        "instructor-submissions-csv",
    ],
)
def test_pages_use_the_same_number_of_queries_for_2_or_10_learners(
    client, world, course, make_user, django_assert_max_num_queries, name, learners
):
    _populate(world, course, make_user, learners)
    assert world.cohort.memberships.count() == learners
    client.force_login(world.owner)
    url = reverse(name, args=[world.cohort.pk])
    # About 11 today (session, user, groups, nav, the page's own reads); an
    # N+1 over 10 learners would add at least 8 more.
    with django_assert_max_num_queries(14):
        response = client.get(url)
    assert response.status_code == 200
    if name == "instructor-cohort":
        assert len(_row_names(response.content.decode())) == learners


@pytest.mark.parametrize("learners", [2, 10])
def test_the_drill_down_uses_a_constant_number_of_queries(
    client, world, course, make_user, django_assert_max_num_queries, learners
):
    _populate(world, course, make_user, learners)
    client.force_login(world.owner)
    url = reverse("instructor-learner", args=[world.cohort.pk, world.lea.pk])
    with django_assert_max_num_queries(12):
        assert client.get(url).status_code == 200


def test_the_can_teach_filter_tells_instructors_apart(world):
    from django.contrib.auth.models import AnonymousUser
    from django.template import Context, Template

    template = Template("{% load cohorts %}{% if user|can_teach %}yes{% endif %}")
    seen = {
        name: template.render(Context({"user": user}))
        for name, user in [
            ("owner", world.owner),
            ("superuser", world.superuser),
            ("learner", world.lea),
            ("anonymous", AnonymousUser()),
        ]
    }
    assert seen == {"owner": "yes", "superuser": "yes", "learner": "", "anonymous": ""}
