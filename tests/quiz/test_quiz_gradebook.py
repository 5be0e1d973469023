"""Quiz scores where assignment scores go: an assignment's quiz item (with
its late policy), the cohort gradebook's quiz columns (page, CSV, Canvas).

Attempts go through the real services (teaching.quizzes.services) at
chosen moments (`now=`), so `submitted_at` is what the server records.
"""

from __future__ import annotations

import csv
import io
import re
from datetime import timedelta

import pytest
from django.urls import reverse

from teaching.assignments.scoring import quiz_scores
from teaching.assignments.services import (
    ItemSpec,
    assignment_create,
    override_set,
)
from teaching.models import Assignment, AssignmentItem, QuizAttempt
from teaching.quizzes.services import (
    SlotSpec,
    attempt_save,
    attempt_start,
    attempt_submit,
    quiz_create,
    quiz_update,
)
from tests.quiz.cohort_fixtures import *  # noqa: F403
from tests.quiz.quiz_fixtures import NOW, api, right_answers, scored_questions

pytestmark = pytest.mark.django_db
DUE = NOW - timedelta(days=3)
CHOICE_ONLY = {"1"}  # the choice slot right, the numeric one left blank
ALL = {"1", "2"}


def make_quiz(
    world,
    *,
    combine="best",
    cohort=None,
    points=(1.0, 1.0),
    title=None,
    feedback="after_submit",
):
    """Two slots, not shuffled: 1 is the choice self-check, 2 the numeric one."""
    questions = scored_questions()
    cohort = cohort or world.cohort
    return quiz_create(
        cohort=cohort,
        actor=cohort.owner,
        slots=[
            SlotSpec(pool={"questions": [questions["choice"].pk]}, points=points[0]),
            SlotSpec(pool={"questions": [questions["numeric"].pk]}, points=points[1]),
        ],
        title=title or "Quiz 1",
        opens_at=DUE - timedelta(days=7),
        closes_at=NOW + timedelta(days=1),
        time_limit=None,
        # Feedback per attempt opens once none is left: the tests sit both.
        attempts_allowed=2,
        combine=combine,
        feedback=feedback,
        shuffle=False,
    )


def words(html: str) -> str:
    """A page's text: tags dropped, white space collapsed."""
    return " ".join(re.sub(r"<[^>]+>", "", html).split())


def sit(quiz, user, at, right: set[str], *, preview=False) -> QuizAttempt:
    """Start at `at`, answer the questions numbered in `right` rightly, submit."""
    attempt, _ = attempt_start(quiz=quiz, learner=user, preview=preview, now=at)
    answers = {n: a for n, a in right_answers(attempt.pk).items() if n in right}
    attempt_save(attempt=attempt, answers=answers, now=at)
    return attempt_submit(attempt=attempt, now=at)


def week(world, items, **policy) -> Assignment:
    return assignment_create(
        cohort=world.cohort,
        actor=world.owner,
        title="Week 1",
        opens_at=DUE - timedelta(days=7),
        due_at=DUE,
        items=items,
        **policy,
    )


PENALTY = {"late_policy": "penalty", "penalty_per_day": 0.1, "penalty_cap": 0.5}


@pytest.mark.parametrize(
    ("combine", "score", "late", "counted", "why", "own"),
    [
        ("best", 1.0, False, 1,
         "best credit from attempt #1, by the due date: 100%", 1.0),
        ("last", 0.4, True, 2,
         "last attempt #2, 2 days late: 50% x 0.80", 0.5),
        ("average", 0.7, True, None,
         "average of 2 attempts: 70%; late attempts kept down to 0.80 of "
         "their credit", 0.75),
    ],
)  # fmt: skip
def test_a_quiz_item_combines_attempts_each_with_the_late_policy(
    world, course, combine, score, late, counted, why, own
):
    quiz = make_quiz(world, combine=combine)
    assignment = week(world, [ItemSpec("quiz", str(quiz.pk), 2)], **PENALTY)
    on_time = sit(quiz, world.lea, DUE - timedelta(hours=1), ALL)  # 1.0
    # 1.5 days after the due date is 2 days late: 0.5 x (1 - 2 x 0.1)
    late_one = sit(quiz, world.lea, DUE + timedelta(days=1, hours=12), CHOICE_ONLY)
    assert (on_time.score, late_one.score) == (1.0, 0.5)
    # A preview (last, and right) and an unsubmitted attempt never count.
    sit(quiz, world.lea, DUE + timedelta(days=2), ALL, preview=True)
    attempt_start(quiz=quiz, learner=world.leo, now=DUE - timedelta(days=1))

    book = api(world.owner).get(f"/api/v1/assignments/{assignment.pk}/gradebook/")
    lea, leo = book.json()["learners"]
    (item,) = lea["items"]
    assert item["label"] == f"quiz: Quiz 1 (#{quiz.pk})"
    assert item["score"] == pytest.approx(score) and item["late"] is late
    assert item["why"] == why
    expected = {1: on_time.pk, 2: late_one.pk, None: None}[counted]
    assert item["counted"]["attempt"] == expected
    assert item["counted"]["submission"] is None
    assert lea["points"] == pytest.approx(2 * score) and lea["possible"] == 2.0
    (nothing,) = leo["items"]
    assert (nothing["score"], nothing["attempted"]) == (0.0, False)
    assert nothing["why"] == (
        "no score yet: none submitted, or held until feedback opens"
    )
    # The quiz's own score (gradebook column, LMS): its rule, nothing late.
    mine = quiz_scores([quiz], [world.lea.pk, world.leo.pk])
    assert mine == {(world.lea.pk, quiz.pk): pytest.approx(own),
                    (world.leo.pk, quiz.pk): None}  # fmt: skip
    # An override replaces the item's score, as for any item.
    override_set(
        assignment=assignment, actor=world.owner, learner=world.lea,
        item_id=assignment.items.get().pk, score=0.9, reason="sat it on paper",
    )  # fmt: skip
    lea = api(world.owner).get(f"/api/v1/assignments/{assignment.pk}/gradebook/")
    (item,) = lea.json()["learners"][0]["items"]
    assert (item["score"], item["late"]) == (0.9, False)
    assert item["why"] == "set to 90% by ian: sat it on paper"


def test_the_drill_down_and_the_learners_page_show_a_quiz_item(client, world, course):
    quiz = make_quiz(world, combine="last", feedback="immediate")  # scores at submit
    assignment = week(
        world, [ItemSpec("exercise", "ex-a"), ItemSpec("quiz", quiz.pk)], **PENALTY
    )
    sit(quiz, world.lea, DUE + timedelta(hours=1), ALL)
    client.force_login(world.owner)
    drill = client.get(
        reverse("instructor-assignment-learner", args=[assignment.pk, world.lea.pk])
    ).content.decode()
    assert "last attempt #1, 1 day late: 100% x 0.90" in drill
    assert "the attempt submitted" in drill
    # Scores in percent, points labelled: the exercise 0, the quiz 1.0 x 0.9.
    assert 'lea: 45% <span class="muted">(0.9 of 2 points)</span>' in drill
    assert '90% <span class="muted">(0.9 of 1 point)</span>' in drill
    client.force_login(world.lea)
    home = client.get(reverse("home")).content.decode()
    quiz_item = f'<a href="{reverse("quiz", args=[quiz.pk])}">Quiz 1</a> (quiz)'
    assert quiz_item in home
    # The same convention on the learner's page: percent, points labelled.
    assert "Quiz 1 (quiz): 90% late" in words(home)
    assert "score 45% (0.9 of 2 points) late" in words(home)
    assert "0.90" not in home and "0.45" not in home


def test_a_quiz_item_names_a_quiz_of_the_same_cohort_by_its_id(world, course):
    quiz = make_quiz(world)
    theirs = make_quiz(world, cohort=world.other_cohort, title="Their quiz")
    url = f"/api/v1/cohorts/{world.cohort.pk}/assignments/"
    client = api(world.owner)

    def post(*items):
        body = {
            "title": "Week 1",
            "opens_at": (DUE - timedelta(days=7)).isoformat(),
            "due_at": DUE.isoformat(),
            "items": list(items),
        }
        return client.post(url, body, format="json")

    for items, said in [
        ([{"kind": "quiz", "slug": theirs.pk}],
         f"Quiz {theirs.pk} belongs to another cohort: an assignment holds only "
         "its own cohort's quizzes."),
        ([{"kind": "quiz", "slug": "999999"}],
         "No quiz '999999' (a quiz item names the quiz's id)."),
        ([{"kind": "quiz", "slug": "quiz-one"}],
         "No quiz 'quiz-one' (a quiz item names the quiz's id)."),
        ([{"kind": "quiz", "slug": quiz.pk}, {"kind": "quiz", "slug": str(quiz.pk)}],
         f"quiz '{quiz.pk}' is listed twice."),
    ]:  # fmt: skip
        refused = post(*items)
        assert refused.status_code == 400, items
        assert refused.json() == {"items": [said]}
    assert not Assignment.objects.exists()

    created = post({"kind": "quiz", "slug": quiz.pk, "weight": 2})  # a number
    assert created.status_code == 201, created.json()
    assert [(i["kind"], i["slug"], i["weight"]) for i in created.json()["items"]] == [
        ("quiz", str(quiz.pk), 2.0)
    ]
    item_id = created.json()["items"][0]["id"]
    edited = client.patch(
        created.json()["url"],
        {"items": [{"kind": "exercise", "slug": "ex-a"},
                   {"kind": "quiz", "slug": str(quiz.pk)}]},  # as text
        format="json",
    )  # fmt: skip
    assert edited.status_code == 200, edited.json()
    assert edited.json()["items"][1]["id"] == item_id  # kept, with its overrides
    # Once a learner has an attempt, the assignment has scores: archive it.
    sit(quiz, world.lea, DUE, CHOICE_ONLY)
    assert client.delete(created.json()["url"]).status_code == 409


def test_the_assignment_form_offers_the_cohorts_quizzes(client, world, course):
    quiz = make_quiz(world)
    make_quiz(world, cohort=world.other_cohort, title="Their quiz")
    client.force_login(world.owner)
    url = reverse("instructor-assignment-new", args=[world.cohort.pk])
    form = client.get(url).content.decode()
    assert f'name="quiz" value="{quiz.pk}"' in form and "Their quiz" not in form
    response = client.post(
        url,
        {
            "title": "Quiz week",
            "opens_at": "2026-06-01T09:00",
            "due_at": "2026-06-08T18:30",
            "late_policy": "none",
            "quiz": [str(quiz.pk)],
            f"weight-quiz-{quiz.pk}": "3",
        },
    )
    assert response.status_code == 302
    item = AssignmentItem.objects.get()
    assert (item.kind, item.quiz, item.weight) == ("quiz", quiz, 3.0)
    edit = client.get(reverse("instructor-assignment-edit", args=[item.assignment_id]))
    assert f'name="quiz" value="{quiz.pk}" checked' in edit.content.decode()


def test_each_quiz_is_a_column_of_the_cohort_gradebook_and_its_exports(
    client, world, course
):
    week(world, [ItemSpec("exercise", "ex-a")])
    quiz = make_quiz(world, combine="average", points=(1.0, 3.0))  # 4 points
    sit(quiz, world.lea, DUE - timedelta(days=1), ALL)  # 1.0
    sit(quiz, world.lea, DUE + timedelta(days=1), CHOICE_ONLY)  # 0.25: never late
    client.force_login(world.owner)

    plain = client.get(
        reverse("instructor-gradebook-csv", args=[world.cohort.pk, "plain"])
    )
    rows = list(csv.reader(io.StringIO(plain.content.decode())))
    assert rows[0] == ["learner", "Week 1 %", "Quiz 1 %", "points", "possible",
                       "total %"]  # fmt: skip
    # (1.0 + 0.25) / 2; the total stays the assignments' (the exercise, 0).
    assert rows[1] == ["lea", "0.0", "62.5", "0.0", "1.0", "0.0"]
    assert rows[2] == ["leo", "0.0", "", "0.0", "1.0", "0.0"]  # no attempt

    canvas = client.get(
        reverse("instructor-gradebook-csv", args=[world.cohort.pk, "canvas"])
    )
    rows = list(csv.reader(io.StringIO(canvas.content.decode())))
    # A quiz's column names its id, so two quizzes of one title never clash.
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                       "Week 1", f"Quiz 1 [quiz {quiz.pk}]"]  # fmt: skip
    assert rows[1] == ["Points Possible", "", "", "", "", "1.0", "4.0"]
    assert rows[2] == ["lea", "", "", "lea", "Spring 2026", "0.0", "2.5"]
    assert rows[3] == ["leo", "", "", "leo", "Spring 2026", "0.0", ""]

    url = reverse("instructor-gradebook", args=[world.cohort.pk])
    page = client.get(url + f"?sort=q{quiz.pk}").content.decode()
    assert "Quiz 1 ▼" in page and '<td class="score quiz-score">62.5%</td>' in page
    # No assignment holds the quiz: its column says it is not in the total,
    # and the line under the table says what the total counts.
    assert "(quiz, not in the total)" in page
    explained = page[page.index('id="total-explained"') :].split("</p>")[0]
    assert "points over the points possible across the 1 assignment" in explained
    assert "Quiz columns are shown for information and are not added in" in explained
    assert '<td class="score total">0% <span class="muted">(0 of 1 point)</span>' in (
        page
    )
    by_learner = client.get(url + "?sort=learner").content.decode()
    assert by_learner.index(">lea<") < by_learner.index(">leo<")
    # leo (no attempt) sorts last, even sorted by the quiz with lea renamed.
    world.lea.username = "zoe"
    world.lea.save()
    by_quiz = client.get(url + f"?sort=q{quiz.pk}").content.decode()
    assert by_quiz.index(">zoe<") < by_quiz.index(">leo<")

    quiz_update(quiz=quiz, actor=world.owner, archived=True)
    plain = client.get(
        reverse("instructor-gradebook-csv", args=[world.cohort.pk, "plain"])
    )
    assert plain.content.decode().splitlines()[0] == (
        "learner,Week 1 %,points,possible,total %"
    )


def test_a_quiz_shows_one_figure_on_every_page_and_export(client, world, course):
    """2.5 of 4 points is 62.5% everywhere (it was 62% on the quiz's page,
    0.63 in the gradebook, 0.62 or 0.50-style fractions elsewhere)."""
    quiz = make_quiz(world, points=(2.5, 1.5), feedback="immediate")
    assignment = week(world, [ItemSpec("quiz", quiz.pk, 4)])  # 4 points too
    sit(quiz, world.lea, DUE - timedelta(days=1), CHOICE_ONLY)
    client.force_login(world.lea)
    pages = {
        name: client.get(url).content.decode()
        for name, url in (
            ("intro", reverse("quiz", args=[quiz.pk])),
            ("home", reverse("home")),
            ("progress", reverse("progress")),
        )
    }
    assert "Your quiz score: 62.5% (the best attempt counts)" in words(pages["intro"])
    assert "2.5 of 4 points (62.5%)" in words(pages["intro"])
    assert "result: 62.5%" in words(pages["home"])
    assert "Quiz 1 (quiz): 62.5%" in words(pages["home"])
    assert f'id="grade-quiz-{quiz.pk}"' in pages["progress"]
    assert "62.5% (2.5 of 4 points)" in words(pages["progress"])  # the assignment
    client.force_login(world.owner)
    pages["quiz page"] = client.get(
        reverse("instructor-quiz", args=[quiz.pk])
    ).content.decode()
    pages["gradebook"] = client.get(
        reverse("instructor-gradebook", args=[world.cohort.pk])
    ).content.decode()
    pages["drill-down"] = client.get(
        reverse("instructor-assignment-learner", args=[assignment.pk, world.lea.pk])
    ).content.decode()
    assert "lea #1 62.5% 62.5%" in words(pages["quiz page"])
    assert words(pages["gradebook"]).count("62.5%") == 3  # week, quiz, total
    assert "lea: 62.5% (2.5 of 4 points)" in words(pages["drill-down"])
    for name, html in pages.items():
        for old in ("62%", "63%", "0.63", "0.62", "0.625"):
            assert old not in words(html), (name, old)

    plain = client.get(
        reverse("instructor-gradebook-csv", args=[world.cohort.pk, "plain"])
    )
    rows = list(csv.reader(io.StringIO(plain.content.decode())))
    assert rows[1][:3] == ["lea", "62.5", "62.5"]  # Week 1 %, Quiz 1 %
    book = api(world.owner).get(
        f"/api/v1/assignments/{assignment.pk}/gradebook/?format=csv"
    )
    rows = list(csv.reader(io.StringIO(book.content.decode())))
    assert rows[0][4] == f"quiz: Quiz 1 (#{quiz.pk}) (x4) %"
    assert (rows[1][0], rows[1][4], rows[1][-1]) == ("lea", "62.5", "62.5")
    results = api(world.owner).get(f"/api/v1/quizzes/{quiz.pk}/results/?format=csv")
    table = list(csv.DictReader(io.StringIO(results.content.decode())))
    assert (table[0]["learner"], table[0]["score %"]) == ("lea", "62.5")


def test_sorting_follows_the_figure_shown(client, world, course):
    """Two learners shown alike tie, and fall back to the username."""
    assignment = week(world, [ItemSpec("exercise", "ex-a")])
    item = assignment.items.get()
    for learner, score in ((world.lea, 0.62496), (world.leo, 0.62504)):
        override_set(
            assignment=assignment, actor=world.owner, learner=learner,
            item_id=item.pk, score=score, reason="marked on paper",
        )  # fmt: skip
    client.force_login(world.owner)
    url = reverse("instructor-gradebook", args=[world.cohort.pk])
    for sort in (f"a{assignment.pk}", "total"):
        page = client.get(f"{url}?sort={sort}").content.decode()
        assert words(page).count("62.5%") == 4  # each learner's cell and total
        assert page.index(">lea<") < page.index(">leo<"), sort
