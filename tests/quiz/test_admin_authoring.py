"""Authoring in the admin: who may do what, the live preview, verified exercises."""

from __future__ import annotations

import pytest
from django.urls import reverse

from grader.models import Exercise
from quiz.models import AuditEntry, Diagnosis, FollowUp, Lesson, Question, Section
from teaching.models import Cohort

pytestmark = pytest.mark.django_db

PREVIEW = "admin:quiz_markdown_preview"
CONTENT = [
    ("quiz", "section"),
    ("quiz", "lesson"),
    ("quiz", "followup"),
    ("quiz", "question"),
    ("grader", "exercise"),
    ("quiz", "diagnosis"),
    ("teaching", "cohort"),
]
KV_SOLUTION = (
    "def kv_cache_bytes(n_layer, n_embd, seq_len, batch_size, bytes_per_element):\n"
    "    return 2 * n_layer * batch_size * seq_len * n_embd * bytes_per_element\n"
)
KV_KEYS_ONLY = (
    "def kv_cache_bytes(n_layer, n_embd, seq_len, batch_size, bytes_per_element):\n"
    "    return n_layer * batch_size * seq_len * n_embd * bytes_per_element\n"
)


@pytest.fixture
def objects(admin_user):
    section = Section.objects.create(slug="basics", order=1, title="Basics")
    lesson = Lesson.objects.create(
        section=section, slug="tying", order=1, title="Tying", question="Q?", body="B"
    )
    follow_up = FollowUp.objects.create(lesson=lesson, question="Why?", answer="So.")
    question = Question.objects.create(
        lesson=lesson, kind="recall", prompt="Explain.", model_answer="It."
    )
    exercise = Exercise.objects.create(
        slug="kv-cache-bytes",
        title="KV",
        harness="kv-cache-bytes",
        entry_point="kv_cache_bytes",
        signature="kv_cache_bytes(...) -> int",
        prompt="P",
        starter="S",
        solution=KV_SOLUTION,
    )
    diagnosis = Diagnosis.objects.create(slug="forgot-k-or-v")
    cohort = Cohort.objects.create(name="Spring", owner=admin_user, join_code="abc123")
    entry = AuditEntry.objects.create(
        action="create", model="quiz.Section", object_id="1", object_repr="x"
    )
    return {
        "section": section,
        "lesson": lesson,
        "followup": follow_up,
        "question": question,
        "exercise": exercise,
        "diagnosis": diagnosis,
        "cohort": cohort,
        "auditentry": entry,
    }


@pytest.fixture
def user_in_role(make_user):
    """A user per row of the permission table (None: anonymous)."""

    def make(role: str):
        if role == "anonymous":
            return None
        if role == "admin-group":
            user = make_user("staff-admin", "admin")
            user.is_superuser = False
            user.save()
            return user
        if role == "staff-instructor":
            # Not something roles.py does today: proves the instructor's
            # permissions are view-only even if someone made them staff.
            user = make_user("staff-instructor", "instructor")
            user.is_staff = True
            user.save()
            return user
        if role == "superuser":
            return make_user("root", "admin")
        return make_user(f"user-{role}", role)

    return make


# role -> (changelist/change view, add, change POST), per content model.
CONTENT_TABLE = {
    "anonymous": ("login", "login", "login"),
    "learner": ("login", "login", "login"),
    "instructor": ("login", "login", "login"),
    "staff-instructor": (200, 403, 403),
    "admin-group": (200, 200, 302),
    "superuser": (200, 200, 302),
}


def _expect(response, expected, url):
    if expected == "login":
        assert response.status_code == 302, url
        assert response["Location"].startswith(reverse("admin:login")), url
    else:
        assert response.status_code == expected, (url, response.status_code)


@pytest.mark.parametrize("role", list(CONTENT_TABLE))
def test_content_pages_by_role(client, objects, user_in_role, role):
    user = user_in_role(role)
    if user:
        client.force_login(user)
    view, add, change_post = CONTENT_TABLE[role]
    _expect(client.get(reverse("admin:index")), view, "index")
    for app, model in CONTENT:
        obj = objects[model]
        for url in (
            reverse(f"admin:{app}_{model}_changelist"),
            reverse(f"admin:{app}_{model}_change", args=[obj.pk]),
        ):
            _expect(client.get(url), view, url)
        url = reverse(f"admin:{app}_{model}_add")
        _expect(client.get(url), add, url)
        delete = reverse(f"admin:{app}_{model}_delete", args=[obj.pk])
        _expect(client.get(delete), add, delete)
    # A change POST: a section title edit.
    section = objects["section"]
    url = reverse("admin:quiz_section_change", args=[section.pk])
    data = {"slug": "basics", "order": 1, "title": "Renamed", "description": ""}
    _expect(client.post(url, data), change_post, url)
    renamed = Section.objects.get(pk=section.pk).title == "Renamed"
    assert renamed == (change_post == 302)


@pytest.mark.parametrize(
    "role", ["anonymous", "learner", "instructor", "admin-group", "superuser"]
)
def test_the_audit_trail_is_read_only_for_everyone(client, objects, user_in_role, role):
    user = user_in_role(role)
    if user:
        client.force_login(user)
    entry = objects["auditentry"]
    staff = role in ("admin-group", "superuser")
    urls = {
        reverse("admin:quiz_auditentry_changelist"): 200,
        reverse("admin:quiz_auditentry_change", args=[entry.pk]): 200,
        reverse("admin:quiz_auditentry_add"): 403,
        reverse("admin:quiz_auditentry_delete", args=[entry.pk]): 403,
    }
    for url, expected in urls.items():
        _expect(client.get(url), expected if staff else "login", url)
    change = reverse("admin:quiz_auditentry_change", args=[entry.pk])
    response = client.post(change, {"action": "delete", "object_repr": "forged"})
    _expect(response, 403 if staff else "login", change)
    entry.refresh_from_db()
    assert entry.object_repr == "x"
    if staff:
        html = client.get(change).content.decode()
        assert 'name="_save"' not in html


@pytest.mark.parametrize(
    ("role", "expected"),
    [
        ("anonymous", "login"),
        ("learner", "login"),
        ("instructor", "login"),
        ("admin-group", 200),
        ("superuser", 200),
    ],
)
def test_the_preview_endpoint_is_staff_only(client, user_in_role, role, expected):
    user = user_in_role(role)
    if user:
        client.force_login(user)
    response = client.post(reverse(PREVIEW), {"text": "**bold**"})
    _expect(response, expected, "preview")
    if expected == 200:
        assert response.json() == {"html": "<p><strong>bold</strong></p>"}


def test_the_preview_is_sanitised_and_rejects_bad_requests(client, admin_user):
    client.force_login(admin_user)
    url = reverse(PREVIEW)
    text = "# Title\n\n<script>alert(1)</script>\n\n[x](javascript:alert(1))"
    html = client.post(url, {"text": text}).json()["html"]
    assert "<h1>Title</h1>" in html
    assert "<script" not in html
    assert "javascript:" not in html
    assert client.get(url).status_code == 405
    too_long = client.post(url, {"text": "x" * 200_001})
    assert too_long.status_code == 400
    assert "longer than 200,000" in too_long.json()["error"]


def test_markdown_fields_carry_the_live_preview_hook(client, admin_user, objects):
    client.force_login(admin_user)
    html = client.get(
        reverse("admin:quiz_lesson_change", args=[objects["lesson"].pk])
    ).content.decode()
    hook = f'data-markdown-preview="{reverse(PREVIEW)}"'
    assert f'name="body" {hook}' in html or (hook in html and 'name="body"' in html)
    # body, follow-up answer, question prompt and explanation; the one-line
    # fields (title, question, takeaway) ask for the inline preview instead.
    assert html.count(hook) >= 4
    assert html.count(f'data-markdown-preview="{reverse(PREVIEW)}?inline=1"') >= 4
    assert "js/admin_preview.js" in html
    # The no-JS preview of the saved text is still there.
    assert "Rendered answer (as saved)" in html


def exercise_form(**overrides) -> dict:
    data = {
        "slug": "kv-cache-bytes",
        "title": "Size the KV cache",
        "lesson": "",
        "published": "on",
        "harness": "kv-cache-bytes",
        "entry_point": "kv_cache_bytes",
        "signature": "kv_cache_bytes(...) -> int",
        "options": "{}",
        "prompt": "Count the bytes.",
        "starter": "def kv_cache_bytes(*args):\n    ...\n",
        "solution": KV_SOLUTION,
        "wrong_solutions": "[]",
    }
    data.update(overrides)
    return data


@pytest.fixture
def verify_inline(monkeypatch, django_capture_on_commit_callbacks):
    """Run the verification an admin save queues at once, in this process.

    A worker runs it in production (grader.tasks.verify_exercise_version);
    here the save's commit callbacks run it, so the test sees its outcome.
    """
    import grader.admin
    from grader.versions import exercise_version_verify

    monkeypatch.setattr(
        grader.admin,
        "verify_version_send",
        lambda version_id: exercise_version_verify(version_id=version_id),
    )

    def post(client, url, data):
        with django_capture_on_commit_callbacks(execute=True):
            return client.post(url, data, follow=True)

    return post


@pytest.mark.slow
def test_saving_a_passing_exercise_publishes_it_verified(
    client, admin_user, verify_inline
):
    client.force_login(admin_user)
    response = verify_inline(
        client, reverse("admin:grader_exercise_add"), exercise_form()
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert "saved as version 1; verifying it in the background" in html
    assert "was added successfully" not in html  # one message, not two
    exercise = Exercise.objects.get(slug="kv-cache-bytes")
    assert exercise.published is True
    assert exercise.version == 1
    assert exercise.verified_at is not None
    assert exercise.verification["status"] == "passed"
    # the save measured its time budget, which the change page shows
    assert exercise.reference_ms > 0 and exercise.time_budget_seconds >= 1.5
    page = client.get(reverse("admin:grader_exercise_change", args=[exercise.pk]))
    assert f"{exercise.time_budget_seconds:g} s of CPU time per grade (10×" in (
        page.content.decode()
    )
    assert "Live: version 1 (published)." in page.content.decode()


@pytest.mark.slow
def test_saving_a_failing_exercise_keeps_it_unpublished_and_says_why(
    client, admin_user, verify_inline
):
    client.force_login(admin_user)
    response = verify_inline(
        client,
        reverse("admin:grader_exercise_add"),
        exercise_form(solution=KV_KEYS_ONLY),
    )
    assert response.status_code == 200
    exercise = Exercise.objects.get(slug="kv-cache-bytes")
    assert exercise.published is False
    assert exercise.version == 0
    assert exercise.verified_at is None
    url = reverse("admin:grader_exercise_change", args=[exercise.pk])
    html = client.get(url).content.decode()
    assert "Version 1 did not verify, so it stays unpublished" in html
    assert "gpt2 fp32, one sequence of 1,024: bytes" in html

    # Fixing the solution and saving again publishes it.
    verify_inline(client, url, exercise_form(solution=KV_SOLUTION))
    exercise.refresh_from_db()
    assert exercise.published is True
    assert exercise.version == 2
    assert exercise.verification["status"] == "passed"


@pytest.mark.slow
def test_a_broken_edit_of_a_live_exercise_leaves_it_live(
    client, admin_user, verify_inline, objects
):
    live = objects["exercise"]
    client.force_login(admin_user)
    url = reverse("admin:grader_exercise_change", args=[live.pk])
    form = exercise_form(slug=live.slug, title=live.title, solution=KV_KEYS_ONLY)
    response = verify_inline(client, url, form)
    html = response.content.decode()
    assert "Learners keep version 1 until it passes" in html
    assert "changed successfully" not in html
    live.refresh_from_db()
    assert live.published is True and live.version == 1
    assert live.solution != KV_KEYS_ONLY
    assert (
        "did not verify, so learners keep version 1" in client.get(url).content.decode()
    )


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            {"harness": "no-such-thing"},
            "No grading module engine/grading_engine/exercises/no_such",
        ),
        ({"entry_point": "not a name"}, "is not a Python function name"),
        ({"options": '{"rtol": 0.1}'}, "unknown option &#x27;rtol&#x27;"),
        ({"options": "[1, 2]"}, "options must be a JSON object"),
        ({"options": '{"time_budget_seconds": 0}'}, "must be a number of seconds"),
        ({"options": '{"lane": "fast"}'}, "&#x27;lane&#x27; must be &quot;light&quot;"),
        ({"wrong_solutions": '[{"name": "x"}]'}, "needs text &#x27;name&#x27;"),
        ({"options": "{not json"}, "Enter a valid JSON"),
    ],
)
def test_bad_exercise_input_is_a_form_error_not_a_save(
    client, admin_user, overrides, message
):
    client.force_login(admin_user)
    response = client.post(
        reverse("admin:grader_exercise_add"), exercise_form(**overrides)
    )
    assert response.status_code == 200
    assert message in response.content.decode()
    assert not Exercise.objects.exists()


def test_tolerance_options_are_accepted_where_the_harness_has_them(client, admin_user):
    # Only the form is under test here: grading is covered above (the
    # verification the save queues is never sent: its commit never comes).
    client.force_login(admin_user)
    response = client.post(
        reverse("admin:grader_exercise_add"),
        exercise_form(
            slug="lm-head",
            harness="lm-head-logits",
            entry_point="lm_head_logits",
            options='{"rtol": 0.001, "atol": 1e-06}',
        ),
    )
    assert response.status_code == 302, response.content.decode()[:3000]
    assert Exercise.objects.get(slug="lm-head").options == {
        "rtol": 0.001,
        "atol": 1e-06,
    }


@pytest.mark.slow
def test_the_verify_action_unpublishes_a_broken_exercise(client, admin_user, objects):
    broken = objects["exercise"]
    broken.solution = KV_KEYS_ONLY
    broken.save()
    client.force_login(admin_user)
    response = client.post(
        reverse("admin:grader_exercise_changelist"),
        {"action": "verify_selected", "_selected_action": [broken.pk]},
        follow=True,
    )
    assert response.status_code == 200
    broken.refresh_from_db()
    assert broken.published is False
    html = response.content.decode()
    assert "Kv-cache-bytes is unpublished: gpt2 fp32, one sequence" in html
    assert "(and 4 more)" in html
    entry = AuditEntry.objects.get(model="grader.Exercise", action="update")
    assert entry.actor == admin_user
    assert entry.changes["published"] == [True, False]


@pytest.fixture
def chromium_page(browser):
    return browser.new_page()


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_lesson_body_previews_live_as_the_author_types(
    live_server, chromium_page, make_user
):
    make_user("author", "admin", password="author-Pass-123")
    section = Section.objects.create(slug="basics", order=1, title="Basics")
    lesson = Lesson.objects.create(
        section=section, slug="tying", order=1, title="Tying", question="Q?", body="B"
    )
    page = chromium_page
    page.goto(live_server.url + reverse("admin:login"))
    page.fill("#id_username", "author")
    page.fill("#id_password", "author-Pass-123")
    page.click("input[type=submit]")
    page.goto(live_server.url + reverse("admin:quiz_lesson_change", args=[lesson.pk]))
    page.fill("#id_body", "Tied **live**\n\n<script>window.pwned = 1</script>")
    preview = page.locator(".field-body .live-markdown-preview")
    preview.locator("strong").wait_for(timeout=15_000)
    assert preview.locator("strong").inner_text() == "live"
    assert preview.locator("script").count() == 0
    assert page.evaluate("window.pwned === undefined")

    # A one-line field (the title) previews inline, as the site shows it.
    page.fill("#id_title", "Tying `wte`")
    title = page.locator(".field-title .live-markdown-preview")
    title.locator("code").wait_for(timeout=15_000)
    assert title.locator("code").inner_text() == "wte"
    assert title.locator("p").count() == 0

    # A follow-up row added after the page loaded gets a preview too.
    page.click("#follow_ups-group .add-row a")
    answer = page.locator("#id_follow_ups-0-answer")
    answer.fill("- one\n- two")
    items = page.locator(".field-answer .live-markdown-preview li")
    items.nth(1).wait_for(timeout=15_000)
    assert items.all_inner_texts() == ["one", "two"]
    page.screenshot(
        path=str(_screenshot_path("admin-live-preview.png")), full_page=True
    )


def _screenshot_path(name: str):
    from tests.conftest import PROJECT_ROOT

    folder = PROJECT_ROOT / "artifacts" / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / name


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"kind": "choice", "choices": '["only"]', "correct_choice": "0"},
            "This choice question: a choice question needs at least two",
        ),
        (
            {"kind": "choice", "choices": '["a", "b"]', "correct_choice": "2"},
            "This choice question: &#x27;answer&#x27; 2 is not an index into 2",
        ),
        (
            {"kind": "recall", "model_answer": ""},
            "This recall question: a recall question needs a model",
        ),
    ],
)
def test_questions_the_content_files_would_reject_are_refused(
    client, admin_user, objects, fields, message
):
    client.force_login(admin_user)
    data = {
        "lesson": objects["lesson"].pk,
        "order": 5,
        "prompt": "Pick.",
        "choices": "[]",
        "tolerance": "0",
        "model_answer": "",
        "explanation": "",
        **fields,
    }
    response = client.post(reverse("admin:quiz_question_add"), data)
    assert response.status_code == 200
    assert message in response.content.decode()
    assert not Question.objects.filter(order=5).exists()


def test_lesson_tags_must_be_words_and_text_gets_unix_newlines(
    client, admin_user, objects
):
    client.force_login(admin_user)
    lesson = objects["lesson"]
    data = {
        "section": lesson.section_id,
        "order": 3,
        "title": "New",
        "slug": "new",
        "question": "Q?",
        "body": "B",
        "tags": '{"not": "a list"}',
        "reading_time": 3,
        "follow_ups-TOTAL_FORMS": 0,
        "follow_ups-INITIAL_FORMS": 0,
        "questions-TOTAL_FORMS": 0,
        "questions-INITIAL_FORMS": 0,
    }
    response = client.post(reverse("admin:quiz_lesson_add"), data)
    assert response.status_code == 200
    assert "Expected a JSON list of words" in response.content.decode()
    data["tags"] = '["tying", "heads"]'
    data["body"] = "Line one\r\nLine two\r\n"  # as browsers post a textarea
    assert client.post(reverse("admin:quiz_lesson_add"), data).status_code == 302
    created = Lesson.objects.get(slug="new")
    assert created.tags == ["tying", "heads"]
    assert created.body == "Line one\nLine two"  # the files' line endings
