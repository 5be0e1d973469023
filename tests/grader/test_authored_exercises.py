"""Authored exercises on the server (issue 46): saved, verified, graded.

An admin's exercise of harness `authored` carries a declaration; saving it
runs the version flow in the real sandbox (a warm pool), where the
reference must pass, each known wrong solution must fail with its own
diagnosis and each right variant must pass. Bad declarations are refused by
the admin's form, naming the field, and nothing goes live.
"""

from __future__ import annotations

import copy
import json
import re

import pytest
from django.urls import reverse

from grader import process_runner, versions
from grader.models import Exercise, ExerciseVersion, LocalCheck
from grader.process_runner import exercise_grade
from quiz.content.models import Diagnosis
from tests.sandbox.conftest import needs_bwrap

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

ENTRY = "top_k_filter"
DECLARATION = {
    "inputs": [
        {"name": "logits", "tensor": ["b", "v"], "scale": 3.0},
        {"name": "k", "int": "k"},
    ],
    "cases": [
        {"name": "b=2, v=10, k=3", "sizes": {"b": 2, "k": 3, "v": 10}},
        {
            "name": "hidden 1",
            "hidden": True,
            "sizes": {"b": {"between": [1, 4]}, "k": {"between": [1, 8]}, "v": 50},
        },
    ],
    "outputs": [{"name": "filtered", "exact": True, "axes": ["batch", "vocab"]}],
}
SOLUTION = """\
import torch


def top_k_filter(logits, k):
    kth = torch.topk(logits, k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < kth, float("-inf"))
"""
SMALLEST = SOLUTION.replace("dim=-1)", "dim=-1, largest=False)").replace(
    "logits < kth", "logits > kth"
)
WRONG = [
    {"name": "keeps the k smallest", "diagnosis": "top-k-smallest", "code": SMALLEST}
]
RIGHT = [
    {
        "name": "scatter",
        "code": "import torch\n\ndef top_k_filter(logits, k):\n"
        "    top = torch.topk(logits, k, dim=-1)\n"
        "    out = torch.full_like(logits, float('-inf'))\n"
        "    return out.scatter(-1, top.indices, top.values)\n",
    }
]


@pytest.fixture(scope="module")
def pool():
    needs_bwrap()
    from grading_engine.sandbox import WarmPool

    with WarmPool(1) as warm:
        yield warm


@pytest.fixture
def diagnosis(db):
    return Diagnosis.objects.create(
        slug="top-k-smallest", summary="Kept the k smallest logits, not the largest."
    )


def _saved(lesson=None, **fields) -> tuple[Exercise, str | None]:
    """Save like the admin (a new exercise), then verify in the pool."""
    values = {
        "slug": "top-k-filter",
        "title": "Top-k filtering",
        "lesson": lesson,
        "harness": "authored",
        "entry_point": ENTRY,
        "signature": "top_k_filter(logits, k) -> Tensor",
        "prompt": "Keep the k largest logits of each row.",
        "starter": "def top_k_filter(logits, k):\n    ...\n",
        "solution": SOLUTION,
        "wrong_solutions": WRONG,
        "right_solutions": RIGHT,
        "declaration": copy.deepcopy(DECLARATION),
        "published": True,
        **fields,
    }
    sent = []
    versions.exercise_save(
        exercise=Exercise(**values), actor=None, creating=True, send=sent.append
    )
    return Exercise.objects.get(slug=values["slug"]), sent


# The top-k exercise's text fields, as a row and as the admin's form have them.
TOP_K = {
    "slug": "top-k-filter",
    "title": "Top-k",
    "harness": "authored",
    "entry_point": ENTRY,
    "signature": "top_k_filter(logits, k) -> Tensor",
    "prompt": "Keep the k largest.",
    "starter": "def top_k_filter(logits, k):\n    ...\n",
    "solution": SOLUTION,
}


def live_row(**fields) -> Exercise:
    """The top-k exercise as a content file loads it: a live row, no bundle."""
    values = {**TOP_K, "wrong_solutions": WRONG, "declaration": DECLARATION}
    return Exercise.objects.create(**{**values, **fields})


def _verify(version_id: int, pool) -> ExerciseVersion:
    versions.exercise_version_verify(version_id=version_id, runner=pool)
    return ExerciseVersion.objects.get(pk=version_id)


def test_a_broken_reference_is_shown_failing_then_a_fix_goes_live(
    pool, diagnosis, django_capture_on_commit_callbacks, monkeypatch, learner, tmp_path
):
    broken = SOLUTION.replace(
        "    kth =",
        "    if logits.shape[-1] > 5:\n        raise ValueError('long')\n    kth =",
    )
    with django_capture_on_commit_callbacks(execute=True):
        exercise, sent = _saved(solution=broken)
    version = _verify(sent[0], pool)
    assert version.status == ExerciseVersion.Status.FAILED
    [problem] = version.verification["failed"]
    assert "case 'b=2, v=10, k=3': ValueError: long" in problem["message"]
    exercise.refresh_from_db()
    assert (exercise.version, exercise.published) == (0, False)

    fixed = versions.exercise_for_editing(exercise)
    fixed.solution = SOLUTION
    sent = []
    with django_capture_on_commit_callbacks(execute=True):
        versions.exercise_save(
            exercise=fixed, actor=None, creating=False, send=sent.append
        )
    version = _verify(sent[0], pool)
    assert version.status == ExerciseVersion.Status.LIVE, version.verification
    exercise.refresh_from_db()
    assert (exercise.published, exercise.declaration) == (True, DECLARATION)

    # A learner's answers, graded as the worker grades them.
    monkeypatch.setitem(process_runner._runners, "test-pool", pool)
    verdict = exercise_grade(exercise=exercise, code=SMALLEST, runner_kind="test-pool")
    assert verdict.status == "failed"
    named = {c.diagnosis for c in verdict.checks if not c.passed and c.diagnosis}
    assert named == {"top-k-smallest"}
    right = exercise_grade(exercise=exercise, code=RIGHT[0]["code"],
                           runner_kind="test-pool")  # fmt: skip
    assert right.status == "passed"

    # `course check`: the bundle built when the version went live, fetched
    # through the API and judged by the client with no reference, agrees
    # with the server on the visible cases.
    assert LocalCheck.objects.filter(exercise=exercise).exists()
    _same_verdicts_here_and_there(exercise, learner, monkeypatch, tmp_path)


def _same_verdicts_here_and_there(exercise, learner, monkeypatch, tmp_path):
    from course import local, store
    from rest_framework.test import APIClient

    monkeypatch.setenv("COURSE_CONFIG_DIR", str(tmp_path))
    api = APIClient()
    api.force_authenticate(learner)
    detail = api.get(f"/api/v1/exercises/{exercise.slug}/").json()
    assert detail["harness"] == "authored" and detail["local_check"]
    assert "declaration" not in detail and "solution" not in detail
    blob = api.get(f"/api/v1/exercises/{exercise.slug}/local-check/").content
    assert SOLUTION not in blob.decode("latin-1")
    assert "hidden 1" not in blob.decode("latin-1")  # no hidden case
    store.exercise_save(detail)
    store.local_check_save(exercise.slug, blob)
    assert local.bundle_current(detail)
    for code in (
        SOLUTION,
        SMALLEST,
        "def top_k_filter(logits, k):\n    return logits\n",
    ):
        mine = local.check(detail, code)
        theirs = exercise_grade(exercise=exercise, code=code, runner_kind="test-pool")
        shown = [c.to_dict() for c in theirs.checks if not c.hidden]
        assert [c for c in mine["checks"]] == shown, code
        assert mine["status"] == theirs.status


def test_a_wrong_solution_must_fail_with_its_own_diagnosis(
    pool, diagnosis, django_capture_on_commit_callbacks
):
    """Each wrong solution is a known mistake itself, so it matches its own
    output; one whose output another mistake already gives is named as that
    one, and the author hears it."""
    Diagnosis.objects.create(slug="top-k-fill-zero", summary="Filled with zeros.")
    same = SMALLEST.replace(
        "return logits.masked_fill(", "return (logits + 0).masked_fill("
    )
    assert same != SMALLEST
    twins = [*WRONG, {"name": "twin", "diagnosis": "top-k-fill-zero", "code": same}]
    with django_capture_on_commit_callbacks(execute=True):
        exercise, sent = _saved(wrong_solutions=twins)
    version = _verify(sent[0], pool)
    assert version.status == ExerciseVersion.Status.FAILED
    [problem] = version.verification["failed"]
    assert problem["name"] == "wrong solution twin"
    assert "its checks name top-k-smallest, not top-k-fill-zero" in problem["message"]


def test_a_failing_right_variant_shows_the_author_the_values(
    pool, diagnosis, django_capture_on_commit_callbacks
):
    """The author sees which case and comparison refused a right variant,
    with the values it compared, on the change page."""
    from grader.admin import version_status_html

    billion = SOLUTION.replace('float("-inf")', "-1e9")
    variant = {"name": "minus a billion", "code": billion}
    with django_capture_on_commit_callbacks(execute=True):
        exercise, sent = _saved(right_solutions=[variant])
    version = _verify(sent[0], pool)
    assert version.status == ExerciseVersion.Status.FAILED
    [problem] = version.verification["failed"]
    assert problem["name"] == "right variant minus a billion"
    assert "b=2, v=10, k=3" in problem["message"], problem
    assert "-inf" in problem["expected"] and "-1e+09" in problem["got"], problem
    html = str(version_status_html(versions.exercise_version_state(exercise=exercise)))
    assert "<dt>expected</dt>" in html and "-1e+09" in html, html


def _form(**changes) -> dict:
    """The admin's add form, filled in as an author would."""
    data = {
        **TOP_K,
        "lesson": "",
        "published": "on",
        "wrong_solutions": json.dumps(WRONG),
        "right_solutions": json.dumps(RIGHT),
        "declaration": json.dumps(DECLARATION),
        "options": "{}",
    }
    for key, value in changes.items():
        data[key] = value if isinstance(value, str) else json.dumps(value)
    return data


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({"solution": "def top_k_filter(logits, k)\n    return logits\n"},
         "solution", "solution: line 1"),
        ({"declaration": {**DECLARATION, "outputs": []}},
         "declaration", "outputs: must be a list of one or more"),
        ({"declaration": {**DECLARATION, "inputs": [
            {"name": "logits", "tensor": [1024, 4096]}, {"name": "k", "int": 3}]}},
         "declaration", "MB of inputs"),
        ({"declaration": {**DECLARATION, "outputs": [{"name": "filtered", "rtol": 2}]}},
         "declaration", "outputs[0].rtol: must be from 0 to 1"),
        ({"wrong_solutions": [{**WRONG[0], "diagnosis": "no-such-mistake"}]},
         "wrong_solutions", "no diagnosis 'no-such-mistake'"),
        ({"harness": "tie-weights"},
         "declaration", "only harness 'authored' reads a declaration"),
    ],
)  # fmt: skip
def test_the_admin_refuses_a_bad_declaration_naming_its_field(
    client, admin_user, diagnosis, change, field, words
):
    client.force_login(admin_user)
    response = client.post(reverse("admin:grader_exercise_add"), _form(**change))
    assert response.status_code == 200  # the form again, with its errors
    errors = response.context["adminform"].form.errors
    assert words in " ".join(errors.get(field, [])), errors
    assert words in response.content.decode().replace("&#x27;", "'")
    assert not Exercise.objects.exists()
    assert not ExerciseVersion.objects.exists()


def test_the_admin_saves_a_good_declaration_as_a_draft_to_verify(
    client, admin_user, diagnosis
):
    client.force_login(admin_user)
    response = client.post(reverse("admin:grader_exercise_add"), _form(), follow=True)
    assert "saved as version 1; verifying it in the background" in (
        response.content.decode()
    )
    exercise = Exercise.objects.get(slug="top-k-filter")
    assert exercise.published is False  # until its first version verifies
    [draft] = exercise.versions.all()
    assert draft.content["declaration"] == DECLARATION
    assert draft.status == ExerciseVersion.Status.QUEUED


def test_the_admins_python_fields_are_code_editors_over_plain_textareas(
    client, admin_user
):
    """Each Python field is a textarea the form posts (the page works without
    JavaScript) marked for the editor bundle; the lists of solutions are
    marked to be edited one code editor per item (tests/browser)."""
    client.force_login(admin_user)
    page = client.get(reverse("admin:grader_exercise_add")).content.decode()
    for field in ("solution", "starter"):
        assert re.search(rf'<textarea[^>]*data-code-editor[^>]*id="id_{field}"', page)
    for field, kind in (("wrong_solutions", "wrong"), ("right_solutions", "right")):
        assert re.search(
            rf'<textarea[^>]*data-code-list="{kind}"[^>]*id="id_{field}"', page
        )
    assert re.search(r'<script src="[^"]*vendor/editor[^"]*\.js" defer>', page)
    # The media property keeps the versions' live progress script.
    assert "js/exercise_versions" in page and "js/admin_preview" in page


def test_a_missing_bundle_is_asked_of_a_worker_once_then_served(
    pool, diagnosis, learner, monkeypatch
):
    """A row loaded from a content file has no bundle yet: the first client
    to ask gets none and a build is queued (once, however many ask); once
    a worker built it, it is served with the digest the detail names."""
    import hashlib

    from celery import current_app
    from django.core.cache import cache
    from rest_framework.test import APIClient

    from grader.local_checks import BUILD_TASK, local_check_build

    cache.clear()
    exercise = live_row()
    sent = []
    monkeypatch.setattr(
        current_app, "send_task", lambda name, **kw: sent.append((name, kw["args"]))
    )
    api = APIClient()
    api.force_authenticate(learner)
    for _ in range(3):
        assert api.get("/api/v1/exercises/top-k-filter/").json()["local_check"] is None
        assert api.get("/api/v1/exercises/top-k-filter/local-check/").status_code == 404
    assert sent == [(BUILD_TASK, [exercise.pk])]

    assert local_check_build(exercise_id=exercise.pk, runner=pool)
    offered = api.get("/api/v1/exercises/top-k-filter/").json()["local_check"]
    blob = api.get("/api/v1/exercises/top-k-filter/local-check/").content
    assert offered["sha256"] == hashlib.sha256(blob).hexdigest()
    # An edit to what is graded makes it stale: not served, asked for again.
    exercise.declaration = {**DECLARATION, "outputs": [{"name": "filtered"}]}
    exercise.save()
    assert api.get("/api/v1/exercises/top-k-filter/").json()["local_check"] is None
    assert len(sent) == 2


def test_a_reference_that_fails_some_hidden_draws_is_refused(
    pool, diagnosis, django_capture_on_commit_callbacks
):
    """Hidden sizes are drawn per attempt: k up to 12 over 10 logits breaks
    topk on some draws only, which one grade's draw may miss."""
    declaration = copy.deepcopy(DECLARATION)
    declaration["cases"][1]["sizes"] = {"b": 1, "k": {"between": [1, 12]}, "v": 10}
    with django_capture_on_commit_callbacks(execute=True):
        exercise, sent = _saved(declaration=declaration)
    version = _verify(sent[0], pool)
    assert version.status == ExerciseVersion.Status.FAILED
    problems = version.verification["failed"]
    assert problems and all(
        p["name"] == "reference solution: hidden draws" for p in problems
    )
    import re

    named = [int(k) for k in re.findall(r"'k': (\d+)", problems[0]["message"])]
    assert named and all(k > 10 for k in named)  # the failing draw, named
    assert "hidden 1 (draw" in problems[0]["message"]
    assert "RuntimeError" in problems[0]["message"], problems


def test_a_submission_and_a_regrade_grade_through_the_declaration(
    pool, diagnosis, learner, admin_user, monkeypatch, settings
):
    """The worker's two grading paths (a learner's submission, a regrade)
    take an authored exercise's checks from its row, as every grade does
    (grader.process_runner.exercise_grade)."""
    from grader.models import RegradeResult, Submission
    from grader.regrade_grading import regrade_claim_next, regrade_grade
    from grader.services import regrade_start
    from grader.submission_grading import submission_grade

    monkeypatch.setitem(process_runner._runners, settings.GRADER_RUNNER, pool)
    exercise = live_row(time_budget_seconds=30)
    mine = Submission.objects.create(
        user=learner, exercise=exercise, code=SMALLEST, seed=5, status="queued"
    )
    assert submission_grade(submission_id=mine.pk) == "failed"
    mine.refresh_from_db()
    named = {c.get("diagnosis") for c in mine.checks if not c["passed"]}
    assert "top-k-smallest" in named

    # Recorded as passed (say, before a fix to the checks): the regrade
    # grades it again through the declaration and changes it.
    Submission.objects.filter(pk=mine.pk).update(status="passed", score=1.0)
    regrade = regrade_start(exercise=exercise, requested_by=admin_user,
                            scope="everyone")  # fmt: skip
    assert regrade.total == 1
    assert regrade_grade(regrade_claim_next()) is True
    result = RegradeResult.objects.get()
    assert (result.status, result.new_status) == ("done", "failed")
