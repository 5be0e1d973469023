"""Quiz-only questions: loaded, exported, authored in the admin, drawn by
quizzes, and shown by nothing else.

The questions in content/quiz-questions are checked in
test_quiz_questions_content.py; this module uses a small course.
"""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command
from django.urls import reverse

from quiz.content.export import content_export
from quiz.content.loader import content_load
from quiz.content.tree import ContentError
from quiz.models import Diagnosis, Lesson, QuizQuestion, Section
from teaching.models import QuizAttempt
from teaching.quizzes.bank import (
    Bank,
    Drawn,
    PoolInvalid,
    is_right,
    matches_wrong,
    pool_check,
    pool_refs,
)
from tests.quiz.cohort_fixtures import *  # noqa: F403
from tests.quiz.quiz_fixtures import *  # noqa: F403
from tests.quiz.quiz_fixtures import api, create, keys, right_answers, start

pytestmark = pytest.mark.django_db

DIAGNOSES = """\
diagnoses:
  - slug: mask-with-zero
    summary: Filled masked scores with 0 instead of -inf.
    lessons: [first-lesson]
  - slug: counted-head-twice
    summary: Counted the tied head as a separate matrix.
    lessons: [second-lesson]
"""
# Text no other record of the test course holds, to look for in pages.
SECRET_PROMPT = "Which wrapped quokka prompt is secret?"
SECRET_EXPLANATION = "Because the quokka explanation says so."
SECRET_KEY = "the quokka key option"


def choice_spec(**changes) -> dict:
    spec = {
        "slug": "masked-zero",
        "title": "A mask filled with zero",
        "section": "basics",
        "lessons": ["first-lesson"],
        "kind": "choice",
        "prompt": SECRET_PROMPT,
        "choices": ["nothing changes", SECRET_KEY, "only the first row"],
        "answer": 1,
        "explanation": SECRET_EXPLANATION,
        "misconceptions": [
            {
                "choice": 0,
                "diagnosis": "mask-with-zero",
                "says": "treated a score of 0 as no weight",
            }
        ],
    }
    spec.update(changes)
    return {k: v for k, v in spec.items() if v is not None}


def numeric_spec(**changes) -> dict:
    spec = {
        "slug": "vocab-growth",
        "title": "What more tokens cost",
        "section": "advanced",
        "lessons": ["third-lesson", "second-lesson"],
        "kind": "numeric",
        "prompt": "Ten more tokens of width 4, tied: how many parameters?",
        "answer": 40,
        "tolerance": {"relative": 0.01},
        "explanation": "10 rows of 4.",
        "misconceptions": [
            {
                "answer": 80,
                "diagnosis": "counted-head-twice",
                "says": "counted the tied head twice",
            }
        ],
    }
    spec.update(changes)
    return {k: v for k, v in spec.items() if v is not None}


def write(tree, spec: dict, name: str | None = None) -> Path:
    return tree.raw(
        f"quiz-questions/{name or spec['slug']}.yaml",
        yaml.safe_dump(spec, sort_keys=False),
    )


@pytest.fixture
def only_tree(content_tree):
    """The small course with diagnoses and one quiz-only question of each kind."""
    content_tree.raw("diagnoses.yaml", DIAGNOSES)
    write(content_tree, choice_spec())
    write(content_tree, numeric_spec())
    return content_tree


@pytest.fixture
def only_course(only_tree, course):
    return course


# Loading ------------------------------------------------------------------------


def test_good_files_load_and_a_reload_changes_nothing(only_tree):
    report = content_load(root=only_tree.root)
    assert "quiz question content/quiz-questions/masked-zero.yaml" in report.created
    choice = QuizQuestion.objects.get(slug="masked-zero")
    assert choice.kind == "choice" and choice.section.slug == "basics"
    assert [le.slug for le in choice.lessons.all()] == ["first-lesson"]
    assert choice.choices == ["nothing changes", SECRET_KEY, "only the first row"]
    assert choice.correct_choice == 1 and choice.numeric_answer is None
    assert choice.misconceptions == [
        {
            "choice": 0,
            "diagnosis": "mask-with-zero",
            "says": "treated a score of 0 as no weight",
        }
    ]
    assert choice.source_path == "content/quiz-questions/masked-zero.yaml"
    numeric = QuizQuestion.objects.get(slug="vocab-growth")
    assert numeric.numeric_answer == 40.0 and numeric.choices == []
    assert (numeric.tolerance, numeric.relative_tolerance) == (0.0, 0.01)
    assert {le.slug for le in numeric.lessons.all()} == {
        "second-lesson",
        "third-lesson",
    }

    again = content_load(root=only_tree.root)
    assert not again.created and not again.updated
    assert "quiz question content/quiz-questions/vocab-growth.yaml" in again.unchanged

    write(
        only_tree, numeric_spec(tolerance={"absolute": 0.5}, lessons=["third-lesson"])
    )
    edited = content_load(root=only_tree.root)
    assert edited.updated == ["quiz question content/quiz-questions/vocab-growth.yaml"]
    numeric.refresh_from_db()
    assert (numeric.tolerance, numeric.relative_tolerance) == (0.5, 0.0)
    assert [le.slug for le in numeric.lessons.all()] == ["third-lesson"]


BAD = [
    ({"slug": "Masked_Zero"}, "slug must be a lowercase slug"),
    ({"slug": "other-name"}, "is not the file's name"),
    ({"colour": "red"}, "unknown keys: colour"),
    ({"title": None}, "title is required"),
    ({"kind": "recall"}, "kind must be choice or numeric"),
    ({"answer": 3}, "answer 3 is not an index into the 3 choices"),
    ({"answer": True}, "answer must be the 0-based index"),
    ({"answer": None}, "answer is required"),
    ({"choices": ["only one"], "answer": 0, "misconceptions": None}, "at least 2"),
    ({"choices": ["same", "same", "other"]}, "choices 0 and 1 are the same text"),
    ({"tolerance": {"absolute": 1}}, "tolerance is for numeric questions only"),
    (
        {"misconceptions": [{"choice": 1, "diagnosis": "mask-with-zero", "says": "x"}]},
        "names option 1, the right answer",
    ),
    (
        {
            "misconceptions": [
                {"choice": 0, "says": "one"},
                {"choice": 0, "says": "two"},
            ]
        },
        "misconceptions 1 and 2 are the same option",
    ),
    ({"misconceptions": [{"choice": 0}]}, "misconception 1: says must be text"),
    ({"misconceptions": [{"answer": 0, "says": "x"}]}, "unknown keys answer"),
    ({"misconceptions": [{"choice": 7, "says": "x"}]}, "choice 7 is not an index"),
    ({"misconceptions": "mask-with-zero"}, "misconceptions is a list of"),
]
BAD_NUMERIC = [
    ({"answer": float("nan")}, "answer must be finite"),
    ({"answer": "forty"}, "answer must be a number"),
    ({"choices": ["1", "2"]}, "choices are for choice questions only"),
    ({"tolerance": {"percent": 1}}, "tolerance is {absolute: x} or {relative: x}"),
    ({"tolerance": {"absolute": -1}}, "tolerance.absolute must be >= 0"),
    (
        {"misconceptions": [{"answer": 40.3, "says": "close"}]},
        "answer 40.3 is accepted as the key 40 within the tolerance",
    ),
    (
        {
            "misconceptions": [
                {"answer": 80, "says": "one"},
                {"answer": 80.5, "says": "two"},
            ]
        },
        "misconceptions 1 and 2 are the same answer within the tolerance",
    ),
    ({"misconceptions": [{"choice": 0, "says": "x"}]}, "unknown keys choice"),
]


def _refused(tree, path: Path, expected: str) -> str:
    with pytest.raises(ContentError) as raised:
        content_load(root=tree.root)
    text = str(raised.value)
    assert path.name in text and expected in text, text
    # Nothing half-loaded: the files are checked before the transaction.
    assert not Lesson.objects.exists() and not QuizQuestion.objects.exists()
    return text


@pytest.mark.parametrize(("changes", "expected"), BAD, ids=[e for _, e in BAD])
def test_a_bad_choice_file_is_refused_with_its_path_and_reason(
    only_tree, changes, expected
):
    _refused(
        only_tree, write(only_tree, choice_spec(**changes), "masked-zero"), expected
    )


@pytest.mark.parametrize(
    ("changes", "expected"), BAD_NUMERIC, ids=[e for _, e in BAD_NUMERIC]
)
def test_a_bad_numeric_file_is_refused_with_its_path_and_reason(
    only_tree, changes, expected
):
    _refused(only_tree, write(only_tree, numeric_spec(**changes)), expected)


def test_invalid_yaml_names_its_line(only_tree):
    path = only_tree.raw("quiz-questions/broken.yaml", "slug: broken\ntitle: [oops\n")
    _refused(only_tree, path, "invalid YAML")


def test_the_message_names_the_line_of_the_key(only_tree):
    path = write(only_tree, choice_spec(answer=9), "masked-zero")
    text = _refused(only_tree, path, "answer 9")
    line = path.read_text().splitlines().index("answer: 9") + 1
    assert f"masked-zero.yaml:{line}:" in text


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"lessons": ["no-such-lesson"]}, "no such lesson no-such-lesson"),
        ({"section": "no-such-section"}, "no such section no-such-section"),
        (
            {"misconceptions": [{"choice": 0, "diagnosis": "unheard-of", "says": "x"}]},
            "no such diagnosis unheard-of",
        ),
    ],
)
def test_a_missing_lesson_section_or_diagnosis_rolls_the_load_back(
    only_tree, changes, expected
):
    path = write(only_tree, choice_spec(**changes), "masked-zero")
    _refused(only_tree, path, expected)
    assert not Diagnosis.objects.exists() and not Section.objects.exists()


def test_a_removed_file_leaves_its_question_in_place_and_says_so(only_tree):
    content_load(root=only_tree.root)
    (only_tree.root / "quiz-questions" / "vocab-growth.yaml").unlink()
    report = content_load(root=only_tree.root)
    assert report.quiz_questions_missing_from_files == ["vocab-growth"]
    assert QuizQuestion.objects.filter(slug="vocab-growth").exists()
    out = StringIO()
    call_command("load_content", str(only_tree.root), stdout=out)
    assert "quiz question 'vocab-growth' is in the database but in no file" in (
        out.getvalue()
    )


# Exporting ----------------------------------------------------------------------


def _rows() -> list[dict]:
    return [
        {
            **{
                f.name: f.value_from_object(q)
                for f in QuizQuestion._meta.concrete_fields
                if f.name not in ("id", "updated_at", "section")
            },
            "section": q.section.slug,
            "lessons": sorted(le.slug for le in q.lessons.all()),
        }
        for q in QuizQuestion.objects.order_by("slug")
    ]


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_load_export_load_gives_the_same_questions_and_files(only_tree, tmp_path):
    content_load(root=only_tree.root)
    before = _rows()
    assert len(before) == 2
    first = tmp_path / "first" / "content"
    content_export(root=first, source=only_tree.root)
    text = (first / "quiz-questions" / "masked-zero.yaml").read_text()
    assert text.startswith("slug: masked-zero\ntitle: A mask filled with zero\n")
    assert "lessons: [first-lesson]\n" in text
    # jsonb keeps no key order; the file has the documented one.
    assert "- choice: 0\n    diagnosis: mask-with-zero\n    says: " in text
    numeric = (first / "quiz-questions" / "vocab-growth.yaml").read_text()
    assert "lessons: [second-lesson, third-lesson]\n" in numeric  # course order
    assert "tolerance: {relative: 0.01}\n" in numeric

    QuizQuestion.objects.all().delete()
    content_load(root=first)
    after = _rows()
    for row in after + before:
        row.pop("source_path")
    assert after == before
    second = tmp_path / "second" / "content"
    content_export(root=second, source=first)
    assert _files(second) == _files(first)


def test_an_admin_edit_exports_its_file_and_a_deletion_removes_it(only_tree):
    root = only_tree.root
    content_load(root=root)
    content_export(root=root, source=root)  # normalise the hand-written files
    before = _files(root)
    question = QuizQuestion.objects.get(slug="vocab-growth")
    question.explanation = "Ten rows.\r\nOf four numbers each."
    question.save()
    report = content_export(root=root, source=root)
    assert report.written == ["quiz-questions/vocab-growth.yaml"]
    after = _files(root)
    assert {n for n in after if after[n] != before.get(n)} == set(report.written)
    assert "explanation: |\n  Ten rows.\n  Of four numbers each.\n" in (
        after["quiz-questions/vocab-growth.yaml"].decode()
    )
    QuizQuestion.objects.filter(slug="masked-zero").delete()
    report = content_export(root=root, source=root)
    assert report.removed == ["quiz-questions/masked-zero.yaml"]


def test_a_stored_question_the_loader_would_refuse_stops_the_export(
    only_tree, tmp_path
):
    content_load(root=only_tree.root)
    QuizQuestion.objects.filter(slug="masked-zero").update(correct_choice=7)
    with pytest.raises(ContentError) as raised:
        content_export(root=tmp_path / "out", source=only_tree.root)
    assert "quiz-questions/masked-zero.yaml" in str(raised.value)
    assert "answer 7 is not an index" in str(raised.value)
    assert not (tmp_path / "out").exists()


# The admin ----------------------------------------------------------------------


def _admin_form(**changes) -> dict:
    basics = Section.objects.get(slug="basics")
    lesson = Lesson.objects.get(slug="first-lesson")
    data = {
        "slug": "made-in-admin",
        "title": "Made in the admin",
        "section": basics.pk,
        "lessons": [lesson.pk],
        "kind": "choice",
        "prompt": "Pick the\r\nsecond.  ",
        "choices": '[" one ", "two", "three"]',
        "correct_choice": "1",
        "numeric_answer": "",
        "tolerance": "0",
        "relative_tolerance": "0",
        "explanation": "Two it is.",
        "misconceptions": '[{"says": "took the first", "choice": 0, '
        '"diagnosis": "mask-with-zero"}]',
    }
    data.update(changes)
    return data


def test_an_admin_creates_a_quiz_question_checked_like_a_file(
    client, admin_user, only_tree, tmp_path
):
    content_load(root=only_tree.root)
    client.force_login(admin_user)
    url = reverse("admin:quiz_quizquestion_add")
    assert client.get(url).status_code == 200
    response = client.post(url, _admin_form())
    assert response.status_code == 302, response.context["adminform"].form.errors
    made = QuizQuestion.objects.get(slug="made-in-admin")
    # Stored as a load of its exported file would store it.
    assert made.prompt == "Pick the\nsecond."
    assert made.choices == ["one", "two", "three"]
    assert made.misconceptions == [
        {"choice": 0, "diagnosis": "mask-with-zero", "says": "took the first"}
    ]
    assert [le.slug for le in made.lessons.all()] == ["first-lesson"]
    before = _rows()
    content_export(root=tmp_path / "out", source=only_tree.root)
    QuizQuestion.objects.all().delete()
    content_load(root=tmp_path / "out")
    assert [{**r, "source_path": ""} for r in _rows()] == [
        {**r, "source_path": ""} for r in before
    ]
    # The changelist searches slug, title and prompt.
    found = client.get(reverse("admin:quiz_quizquestion_changelist"), {"q": "second"})
    assert "made-in-admin" in found.content.decode()


@pytest.mark.parametrize(
    ("changes", "field", "expected"),
    [
        ({"correct_choice": "5"}, "correct_choice", "is not an index into the 3"),
        ({"choices": '["a", "a"]'}, "choices", "are the same text"),
        (
            {"misconceptions": '[{"choice": 1, "says": "x"}]'},
            "misconceptions",
            "the right answer",
        ),
        (
            {"misconceptions": '[{"choice": 0, "diagnosis": "nope", "says": "x"}]'},
            "misconceptions",
            "No such diagnosis nope",
        ),
        ({"slug": "Not_A_Slug"}, "slug", "lowercase slug"),
        (
            {"kind": "numeric", "numeric_answer": "", "misconceptions": "[]"},
            "numeric_answer",
            "answer is required",
        ),
        (
            {
                "kind": "numeric",
                "numeric_answer": "40",
                "relative_tolerance": "0.1",
                "misconceptions": '[{"answer": 43, "says": "close"}]',
            },
            "misconceptions",
            "is accepted as the key",
        ),
    ],
)
def test_the_admin_refuses_what_the_loader_refuses(
    client, admin_user, only_tree, changes, field, expected
):
    content_load(root=only_tree.root)
    client.force_login(admin_user)
    response = client.post(
        reverse("admin:quiz_quizquestion_add"), _admin_form(**changes)
    )
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert expected in " ".join(errors.get(field, [])), errors
    assert not QuizQuestion.objects.filter(slug="made-in-admin").exists()


# The bank -----------------------------------------------------------------------


def test_a_pool_names_quiz_questions_and_lessons_and_sections_bring_them(
    only_course,
):
    assert pool_refs({"quiz_questions": ["vocab-growth"]}) == ["b:vocab-growth"]
    by_lesson = pool_refs({"lessons": ["first-lesson"]})
    assert "b:masked-zero" in by_lesson and "b:vocab-growth" not in by_lesson
    # The M2M brings it to each of its lessons; the section brings its own.
    assert "b:vocab-growth" in pool_refs({"lessons": ["second-lesson"]})
    both = pool_refs({"sections": ["basics", "advanced"]})
    assert [r for r in both if r.startswith("b:")] == [
        "b:masked-zero",
        "b:vocab-growth",
    ]
    assert both == pool_refs({"sections": ["advanced", "basics"]})  # stable
    assert pool_check({"quiz_questions": ["masked-zero"]}) == {
        "quiz_questions": ["masked-zero"]
    }
    with pytest.raises(PoolInvalid, match="No quiz question no-such."):
        pool_check({"quiz_questions": ["masked-zero", "no-such"]})


def test_the_bank_draws_a_quiz_question_with_its_named_wrong_answers(
    only_course, django_assert_num_queries
):
    first_check = Lesson.objects.get(slug="first-lesson").questions.first()
    refs = [f"q:{first_check.pk}", "t:none", "b:masked-zero", "b:vocab-growth"]
    with django_assert_num_queries(3):  # self-checks, templates, quiz-only
        bank = Bank(refs)
    choice = bank.draw("b:masked-zero", "seed")
    assert choice.title == "A mask filled with zero"
    assert choice.options == ["nothing changes", SECRET_KEY, "only the first row"]
    assert choice.correct == 1 and choice.answer_text() == SECRET_KEY
    assert is_right(choice, 1) and not is_right(choice, 0)
    wrong = matches_wrong(choice, 0)
    assert (wrong.diagnosis, wrong.value) == ("mask-with-zero", "nothing changes")
    assert matches_wrong(choice, 2) is None

    numeric = bank.draw("b:vocab-growth", "seed")
    assert numeric.answer == 40 and numeric.tolerance == (0.0, 0.01)
    assert numeric.tolerance_text() == "within 1%"
    assert is_right(numeric, "40.3") and not is_right(numeric, "41")
    assert matches_wrong(numeric, "80.5").diagnosis == "counted-head-twice"
    assert matches_wrong(numeric, "79.5").number == 80
    assert matches_wrong(numeric, "60") is None


def test_a_tolerance_of_both_kinds_says_which_wins():
    drawn = Drawn(
        ref="b:x",
        kind="numeric",
        title="",
        prompt="",
        answer=100,
        tolerance=(0.5, 0.01),
    )
    assert drawn.tolerance_text() == "within 0.5 or 1%, whichever is larger"
    assert is_right(drawn, "100.9") and not is_right(drawn, "101.1")


def test_an_instructor_names_one_in_a_slot_line(only_course):
    from teaching.quizzes.instructor_views import parse_slots

    spec = parse_slots("2 x1: quiz-question:masked-zero, lesson:third-lesson")[0]
    assert spec.pool == {"quiz_questions": ["masked-zero"], "lessons": ["third-lesson"]}


def test_a_quiz_draws_it_holds_its_key_back_and_names_the_mistake(world, only_course):
    quiz = create(
        world,
        feedback="after_submit",
        attempts_allowed=1,  # feedback opens once no attempt is left
        slots=[
            {"points": 1, "pool": {"quiz_questions": ["masked-zero"]}},
            {"points": 1, "pool": {"quiz_questions": ["vocab-growth"]}},
        ],
    )
    seen = []
    state = start(world.lea, quiz["id"])
    seen.append(state.content.decode())
    state = state.json()
    attempt = QuizAttempt.objects.get(pk=state["id"])
    assert sorted(i["ref"] for i in attempt.items) == [
        "b:masked-zero",
        "b:vocab-growth",
    ]
    answers = right_answers(state["id"])
    choice_n = next(n for n, d in keys(state["id"]).items() if d.kind == "choice")
    item = attempt.items[choice_n - 1]
    answers[str(choice_n)] = item["order"].index(0)  # the misconception's option
    url = f"/api/v1/attempts/{state['id']}/"
    saved = api(world.lea).patch(url, {"answers": answers}, format="json")
    seen.append(saved.content.decode())
    seen.append(api(world.lea).get(url).content.decode())
    for body in seen:
        for secret in (SECRET_EXPLANATION, "10 rows of 4.", "right_option"):
            assert secret not in body, (secret, body[:300])
    result = api(world.lea).post(f"{url}submit/").json()
    assert result["score"] == 0.5
    feedback = {q["number"]: q["feedback"] for q in result["questions"]}
    assert feedback[choice_n]["explanation"] == SECRET_EXPLANATION
    mistake = feedback[choice_n]["mistake"]
    assert mistake["diagnosis"] == "mask-with-zero"
    assert mistake["says"] == "treated a score of 0 as no weight"


# No page but a quiz shows it ------------------------------------------------------


def _secrets() -> list[str]:
    question = QuizQuestion.objects.get(slug="masked-zero")
    return [
        question.prompt,
        question.explanation,
        SECRET_KEY,
        question.misconceptions[0]["says"],
    ]


def test_no_lesson_page_self_check_review_or_export_shows_it(
    client, learner, only_tree
):
    content_load(root=only_tree.root)
    question = QuizQuestion.objects.get(slug="masked-zero")
    lesson = Lesson.objects.get(slug="first-lesson")
    assert list(lesson.quiz_questions.all()) == [question]  # linked, yet hidden
    client.force_login(learner)
    page = client.get(lesson.get_absolute_url())
    assert page.status_code == 200 and "Pick one." in page.content.decode()
    bodies = [page.content.decode()]
    # Answering it as if it were the lesson's self-check shows nothing of it.
    for data in ({"answer": "1"}, {"answer": "40", "self_rating": "right"}):
        for accept in ("application/json", "text/html"):
            response = client.post(
                reverse(
                    "question-answer",
                    kwargs={"slug": lesson.slug, "question_id": question.pk},
                ),
                data,
                headers={"accept": accept},
            )
            bodies.append(response.content.decode())
    # Answer every real self-check, so review cards and progress exist.
    for check in lesson.questions.all():
        client.post(
            reverse(
                "question-answer", kwargs={"slug": lesson.slug, "question_id": check.pk}
            ),
            {"answer": "0", "self_rating": "wrong"},
        )
    for url in ("home", "review", "progress", "progress-export"):
        response = client.get(reverse(url))
        assert response.status_code == 200, url
        bodies.append(response.content.decode())
    assert "Pick one." in bodies[-3]  # the review shows the missed self-check
    for body in bodies:
        for secret in _secrets():
            assert secret not in body, (secret, body[:300])
    exported = json.dumps(bodies)
    assert "masked-zero" not in exported
