"""axe-core in Debian's Chromium: every main page, on a desktop in the light
theme and on a 390 px phone in the dark theme, has no accessibility violation
of any impact and no horizontal overflow; each page x mode leaves a
full-page screenshot in artifacts/screenshots/<page>-<mode>.png.

Each width and each theme is audited once, not every pair of them: a
contrast violation comes from a theme's colours, an overflow from the width
(AUDITED). The pairs were audited until issue 30 (three modes: desktop,
phone, dark desktop); the fourth pair, light on a phone, never was.

axe-core comes from the npm registry (pinned in package-lock.json, installed
by `npm ci` in scripts/build_assets.sh) and is injected with
`page.add_script_tag(content=...)` in a context that bypasses the site's CSP
(the pages themselves allow only their own scripts). To cover a new page,
add one entry to PAGES.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
from django.urls import Resolver404, resolve
from django.utils import timezone

from grader.models import Exercise, Submission
from quiz.content.loader import content_load
from quiz.learning.review import cards_schedule
from quiz.models import FollowUp, Lesson, QuestionAttempt
from teaching.cohorts import cohort_create, cohort_join
from teaching.quizzes.services import (
    SlotSpec,
    attempt_save,
    attempt_start,
    attempt_submit,
    quiz_create,
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
SHOTS = ROOT / "artifacts" / "screenshots"

MODES = {
    "desktop": {"viewport": {"width": 1100, "height": 800}},
    "phone": {
        "viewport": {"width": 390, "height": 844},
        "is_mobile": True,
        "has_touch": True,
        "device_scale_factor": 2,
    },
    "dark": {"viewport": {"width": 1100, "height": 800}, "color_scheme": "dark"},
}
MODES["phone-dark"] = {**MODES["phone"], "color_scheme": "dark"}
# What every page of PAGES is audited in: each width once, each theme once.
AUDITED = ("desktop", "phone-dark")

# A lesson written like the course's: Markdown in its title, question,
# takeaway and follow-ups, code that scrolls, a wide table and a figure.
LESSON_BODY = """\
## What you need to know

Weight tying shares **one** matrix between `wte` and `lm_head`:

```python
model.lm_head.weight = model.transformer.wte.weight  # one tensor, two names, and a comment long enough to scroll
assert model.lm_head.weight.data_ptr() == model.transformer.wte.weight.data_ptr()
```

| model | layers | heads | d_model | parameters | context | vocabulary |
|---|---|---|---|---|---|---|
| GPT-2 small | 12 | 12 | 768 | 124,439,808 | 1,024 | 50,257 |
| GPT-2 XL | 48 | 25 | 1,600 | 1,557,611,200 | 1,024 | 50,257 |

![Parameters per layer](figure:tiny-chart)

    plain indented code that is also far too long to fit on a phone screen at all, so it scrolls
"""  # noqa: E501

FIGURE = '''\
"""A tiny chart for the accessibility test."""

CAPTION = "Parameters per layer"


def draw(fig):
    ax = fig.add_subplot()
    ax.plot([1, 2, 3], [1, 4, 9], label="params")
    ax.set_xlabel("layer")
    ax.legend()
'''

# Code with lines as long as a real exercise's: the editor scrolls sideways
# on a phone, and a scroll region must be reachable by keyboard (issue 28).
LONG_CODE = (
    "def block_param_count(n_embd):\n"
    "    # attention and MLP weights and biases, then both LayerNorms' scales\n"
    "    return 12 * n_embd * n_embd + 13 * n_embd\n"
)


@dataclass(frozen=True)
class Page:
    """Who looks at which path; `ready` is a selector to wait for."""

    who: str | None
    path: Callable[[dict], str]
    ready: str | None = None


def _submission(status: str) -> Page:
    return Page("lea", lambda w: f"/submissions/{w['submissions'][status]}/")


PAGES: dict[str, Page] = {
    "home": Page("lea", lambda w: "/"),
    "lesson": Page("lea", lambda w: "/lessons/first-lesson/"),
    "exercise": Page("lea", lambda w: "/exercises/ex-a/", ready=".cm-editor"),
    **{
        f"submission-{status}": _submission(status)
        for status in ("queued", "running", "passed", "failed", "error")
    },
    "review": Page("lea", lambda w: "/review/"),
    "progress": Page("lea", lambda w: "/progress/"),
    "exercise-index": Page("lea", lambda w: "/exercises/"),
    "cohort-list": Page("ian", lambda w: "/instructor/"),
    "matrix": Page("ian", lambda w: f"/instructor/cohorts/{w['cohort']}/"),
    "learner": Page(
        "ian", lambda w: f"/instructor/cohorts/{w['cohort']}/learners/{w['lea']}/"
    ),
    "analytics": Page("ian", lambda w: f"/instructor/cohorts/{w['cohort']}/analytics/"),
    "quiz": Page("ian", lambda w: f"/instructor/quizzes/{w['quiz']}/"),
    "quiz-statistics": Page(
        "ian", lambda w: f"/instructor/quizzes/{w['quiz']}/statistics/"
    ),
    "login": Page(None, lambda w: "/accounts/login/"),
    "signup": Page(None, lambda w: "/accounts/signup/"),
}


# Numbers of 4+ characters ("38,597,376", "0.25", "12:30") that the layout
# breaks over two lines: their characters' boxes sit on different lines.
BROKEN_NUMBERS = """() => {
    const out = [];
    const walker = document.createTreeWalker(
        document.querySelector("main") || document.body, NodeFilter.SHOW_TEXT);
    const number = /\\d[\\d,.:%]*\\d%?/g;
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        for (const match of node.data.matchAll(number)) {
            if (match[0].length < 4) continue;
            const range = document.createRange();
            range.setStart(node, match.index);
            range.setEnd(node, match.index + match[0].length);
            const tops = new Set([...range.getClientRects()]
                .filter(r => r.width > 0).map(r => Math.round(r.top)));
            if (tops.size > 1) out.push(match[0]);
        }
    }
    return out;
}"""


def _resolves(path: str) -> bool:
    try:
        resolve(path)
    except Resolver404:
        return False
    return True


@pytest.fixture(scope="module")
def module_browser():
    """One Chromium for the whole module (a launch per test would cost
    more than the pages); the same settings as conftest's `browser`."""
    from tests.conftest import launched_chromium

    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: run scripts/build_assets.sh (npm ci)")
    with launched_chromium() as chromium:
        yield chromium


@pytest.fixture
def world(content_tree, make_user, settings):
    """A learner with work in every state, in a cohort an instructor teaches."""
    content_tree.raw("figures/tiny-chart.py", FIGURE)
    content_tree.lesson(
        "basics",
        1,
        "first-lesson",
        body=LESSON_BODY,
        title="Tying `wte` and **lm_head**",
        question="Why is `lm_head` **tied** to `wte`?",
        takeaway="One matrix, `wte`, serves **both** ends.",
        follow_ups=[
            {"question": "What does `data_ptr()` **show**?", "answer": "`True`."}
        ],
    )
    content_load(root=content_tree.root)
    lesson = Lesson.objects.get(slug="first-lesson")
    exercise = Exercise.objects.create(
        slug="ex-a",
        lesson=lesson,
        title="Count one block",
        harness="block-param-count",
        entry_point="f",
        signature="block_param_count(n_embd) -> int",
        prompt="Count the **parameters**:\n\n```python\n"
        "def block_param_count(n_embd):  # a long line that has to scroll on a phone\n"
        "    ...\n```\n",
        starter=LONG_CODE,
        solution="def f():\n    return 1\n",
    )
    teacher = make_user("ian", "instructor")
    lea = make_user("lea", "learner")
    cohort = cohort_create(owner=teacher, name="Spring")
    cohort_join(cohort=cohort, user=lea)
    failing = [
        {
            "name": "n_embd=768",
            "passed": False,
            "message": "expected 7087872, got 7077888",
        }
    ]
    submissions = {}
    for status in ("queued", "running", "passed", "failed", "error"):
        done = status in Submission.TERMINAL
        sub = Submission.objects.create(
            user=lea,
            exercise=exercise,
            code=LONG_CODE,
            seed=1,
            status=status,
            score={"passed": 1.0, "failed": 0.5}.get(status),
            checks=failing if status == "failed" else [],
            stderr="Traceback (most recent call last):\nValueError: boom"
            if status == "error"
            else "",
        )
        submissions[status] = sub.pk
        if done:
            Submission.objects.filter(pk=sub.pk).update(finished_at=timezone.now())
    cards_schedule(
        user=lea, follow_ups=FollowUp.objects.filter(lesson=lesson), reason="exercise"
    )
    for question in lesson.questions.all():  # the analytics question table
        QuestionAttempt.objects.create(
            user=lea, question=question, answer="1", correct=question.kind == "choice"
        )
    # A quiz lea has sat: its page and its item analysis (chart, tables).
    quiz = quiz_create(
        cohort=cohort,
        actor=teacher,
        slots=[SlotSpec(pool={"lessons": ["first-lesson"]}, draw=2)],
        title="Quiz on tying",
        opens_at=timezone.now() - timedelta(hours=1),
        closes_at=timezone.now() + timedelta(days=1),
    )
    attempt, _ = attempt_start(quiz=quiz, learner=lea)
    attempt_save(attempt=attempt, answers={"1": "1", "2": "7,087,872"})
    attempt_submit(attempt=attempt)
    return {
        "cohort": cohort.pk,
        "quiz": quiz.pk,
        "lea": lea.pk,
        "users": {"lea": lea, "ian": teacher},
        "submissions": submissions,
    }


def log_in_by_cookie(context, base: str, user) -> None:
    """A session cookie for `user`, without the log-in form's round trip."""
    from django.conf import settings
    from django.test import Client

    client = Client()
    client.force_login(user)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME]
    context.add_cookies(
        [{"name": cookie.key, "value": cookie.value, "url": base + "/"}]
    )


def _readable(violations: list[dict]) -> str:
    lines = []
    for v in violations:
        lines.append(f"[{v['impact']}] {v['id']}: {v['help']} ({v['helpUrl']})")
        for node in v["nodes"][:8]:
            lines.append(f"    {', '.join(map(str, node['target']))}")
            lines.append(f"      {node['failureSummary']}".replace("\n", " "))
        if len(v["nodes"]) > 8:
            lines.append(f"    ... and {len(v['nodes']) - 8} more")
    return "\n".join(lines)


def page_problems(page, label: str, shot: str) -> list[str]:
    """axe on the page as it is now, no sideways scrolling, no split numbers;
    a screenshot in SHOTS as `shot`.png. Each problem is a line for a person."""
    page.add_script_tag(content=AXE.read_text())
    violations = page.evaluate(
        """async () => {
            const r = await axe.run(document, {resultTypes: ['violations']});
            return r.violations.map(v => ({
                id: v.id, impact: v.impact, help: v.help, helpUrl: v.helpUrl,
                nodes: v.nodes.map(n => ({
                    target: n.target, failureSummary: n.failureSummary}))}));
        }"""
    )
    width, screen = page.evaluate(
        "() => [document.documentElement.scrollWidth, window.innerWidth]"
    )
    broken = page.evaluate(BROKEN_NUMBERS)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{shot}.png"), full_page=True)
    problems = []
    if violations:
        problems.append(f"{label}:\n" + _readable(violations))
    if broken:
        problems.append(f"{label}: numbers wrap: {broken}")
    if width > screen:
        problems.append(f"{label}: {width} px wide on a {screen} px screen")
    return problems


def _audit(browser, base: str, world: dict, name: str, mode: str) -> list[str]:
    """Open one page in one mode, run axe, screenshot it; return the problems."""
    spec = PAGES[name]
    path = spec.path(world)
    context = browser.new_context(bypass_csp=True, **MODES[mode])
    try:
        if spec.who:
            log_in_by_cookie(context, base, world["users"][spec.who])
        page = context.new_page()
        response = page.goto(base + path)
        assert response.ok, (path, response.status)
        page.wait_for_load_state("load")
        if spec.ready:
            page.wait_for_selector(spec.ready, timeout=30_000)
        return page_problems(page, f"{name} ({mode}) {path}", f"{name}-{mode}")
    finally:
        context.close()


@pytest.mark.parametrize("name", list(PAGES))
def test_page_has_no_axe_violation(module_browser, live_server, world, name):
    """Each page in each AUDITED mode. The modes share one test (and so one
    set of rows): a test's database flush costs more than a page's audit."""
    path = PAGES[name].path(world)
    if not _resolves(path):
        pytest.skip(f"{path} is not a page of this site yet")
    problems = []
    for mode in AUDITED:
        problems += _audit(module_browser, live_server.url, world, name, mode)
    assert problems == [], "\n".join(problems)


def test_the_editors_scroll_region_is_a_keyboard_stop_before_typing(
    module_browser, live_server, world
):
    """On a phone the code scrolls sideways inside .cm-scroller (issue 28):
    Tab reaches the scroller, whose arrow keys scroll it, and the next Tab
    enters the editor, where typing still reaches the form."""
    context = module_browser.new_context(**MODES["phone"])
    try:
        log_in_by_cookie(context, live_server.url, world["users"]["lea"])
        page = context.new_page()
        page.goto(live_server.url + "/exercises/ex-a/")
        page.wait_for_selector(".cm-editor .cm-content")
        scroller = page.locator(".cm-scroller")
        assert scroller.get_attribute("tabindex") == "0"
        assert scroller.get_attribute("role") == "region"
        assert scroller.get_attribute("aria-label").startswith("Your code")
        assert page.evaluate(
            "() => { const s = document.querySelector('.cm-scroller');"
            " return s.scrollWidth > s.clientWidth; }"
        ), "the test's code should be wider than a phone"

        page.click("label[for=code]")  # focuses the editor, not the hidden textarea
        assert page.evaluate("document.activeElement.classList.contains('cm-content')")
        page.keyboard.press("Escape")  # then Tab leaves instead of indenting
        page.keyboard.press("Shift+Tab")
        assert page.evaluate("document.activeElement.classList.contains('cm-scroller')")
        page.keyboard.press("ArrowRight")
        page.wait_for_function(  # a function: the page's CSP refuses a bare string
            "() => document.querySelector('.cm-scroller').scrollLeft > 0"
        )
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.locator("#code-form").screenshot(
            path=str(SHOTS / "exercise-scroller-focus-phone.png")
        )

        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.classList.contains('cm-content')")
        page.keyboard.press("Control+End")
        page.keyboard.type("  # typed")
        assert page.input_value("#code").endswith("  # typed")
    finally:
        context.close()
