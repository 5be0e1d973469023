"""Every datetime field of every form keeps its dates in the instructor's zone.

The forms (quiz new/edit, quiz accommodation, assignment new/edit,
assignment extension) render their datetime inputs with
teaching/templatetags/zoned_time.py: UTC values in `data-utc` that
static/js/localtime.js moves into the browser's zone, whose name it posts in
`tz`. Here each form is opened, filled as that script would fill it in a zone
east (Asia/Kolkata, +05:30) and one west (America/Los_Angeles) of UTC, and
posted: an unchanged save keeps the stored instants to the second, a typed
time is stored as that zone's time, and a refused form (400) gives back what
was typed in the zone it was typed in. The DST edges: a skipped local time is
refused naming the field, a repeated one is the first of the two.
tests/browser/test_form_time_zones.py runs the script itself in Chromium.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from zoneinfo import ZoneInfo

import pytest
from django.test import Client

from teaching.assignments.services import ItemSpec, assignment_create
from teaching.models import Assignment, Quiz, QuizAccommodation
from teaching.templatetags.zoned_time import FORM_TIME, FormTimeError, form_time
from tests.quiz.cohort_fixtures import *  # noqa: F403
from tests.quiz.quiz_fixtures import *  # noqa: F403
from tests.quiz.quiz_fixtures import create

pytestmark = pytest.mark.django_db

EAST, WEST = "Asia/Kolkata", "America/Los_Angeles"
ZONES = [EAST, WEST]
# Stored with seconds, one in winter and one in summer (LA changes offset).
OPENS = datetime(2031, 1, 15, 8, 30, 17, tzinfo=UTC)
CLOSES = datetime(2031, 7, 15, 20, 45, 59, tzinfo=UTC)


class FormReader(HTMLParser):
    """Each form of a page: what a browser would post, and its inputs."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.forms: list[dict] = []
        self._form = self._select = self._option = self._textarea = None
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        a = {k: v if v is not None else "" for k, v in attrs}
        if tag == "form":
            self._form = {"attrs": a, "fields": [], "inputs": {}}
            self.forms.append(self._form)
        elif self._form is None or "name" not in a and tag != "option":
            return
        elif tag == "input":
            self._form["inputs"][a["name"]] = a
            if a.get("type") not in ("checkbox", "radio"):
                self._form["fields"].append([a["name"], a.get("value", "")])
            elif "checked" in a:
                self._form["fields"].append([a["name"], a.get("value", "on")])
        elif tag == "select":
            self._select = {"name": a["name"], "first": None, "chosen": None}
        elif tag == "option" and self._select is not None:
            self._option = {"value": a.get("value"), "text": "", "on": "selected" in a}
        elif tag == "textarea":
            self._textarea = [a["name"], ""]

    def handle_data(self, data):
        if self._option is not None:
            self._option["text"] += data
        if self._textarea is not None:
            self._textarea[1] += data

    def handle_endtag(self, tag):
        if tag == "form":
            self._form = None
        elif tag == "option" and self._option is not None:
            option, self._option = self._option, None
            value = option["value"] if option["value"] is not None else option["text"]
            self._select["first"] = self._select["first"] or value
            if option["on"]:
                self._select["chosen"] = value
        elif tag == "select" and self._select is not None:
            chosen = self._select["chosen"] or self._select["first"] or ""
            self._form["fields"].append([self._select["name"], chosen])
            self._select = None
        elif tag == "textarea" and self._textarea is not None:
            self._form["fields"].append(self._textarea)
            self._textarea = None

    def form(self, *, id: str = "", action: str = "") -> dict:  # noqa: A002
        for form in self.forms:
            if id and form["attrs"].get("id") == id:
                return form
            if action and action in form["attrs"].get("action", ""):
                return form
        raise AssertionError(f"no form {id or action}")


def page_form(client, url: str, **which) -> dict:
    response = client.get(url)
    assert response.status_code == 200
    return FormReader(response.content.decode()).form(**which)


def shown_in(moment: datetime, zone: str) -> str:
    """What a datetime-local input shows for `moment` in `zone`."""
    return moment.astimezone(ZoneInfo(zone)).strftime(FORM_TIME)


def as_the_script_fills_it(form: dict, zone: str) -> dict:
    """What static/js/localtime.js does to the form in a browser in `zone`."""
    for field in form["fields"]:
        attrs = form["inputs"].get(field[0], {})
        if attrs.get("type") == "datetime-local" and attrs.get("data-utc"):
            utc = datetime.fromisoformat(attrs["data-utc"])
            field[1] = shown_in(utc, zone)
        if field[0] == "tz" and "data-browser-zone" in attrs:
            field[1] = zone
    return form


def data(form: dict, **changes) -> dict:
    """The form's fields as a POST body, with `changes` typed over them."""
    body: dict[str, list[str]] = {}
    for name, value in form["fields"]:
        body.setdefault(name, []).append(value)
    body.update({name: [value] for name, value in changes.items()})
    return body


def zoned(text: str, zone: str) -> datetime:
    """`text` (as typed) in `zone`, in UTC: what must be stored."""
    naive = datetime.strptime(text, FORM_TIME)
    return naive.replace(tzinfo=ZoneInfo(zone)).astimezone(UTC)


def assert_converted_by_the_script(form: dict, *names: str) -> None:
    """Each datetime input carries its UTC value for the script (`data-utc`,
    empty for none) and the form's `tz` is the script's to fill."""
    for name in names:
        assert form["inputs"][name]["type"] == "datetime-local"
        assert "data-utc" in form["inputs"][name], name
    assert "data-browser-zone" in form["inputs"]["tz"]
    assert form["inputs"]["tz"]["value"] == "UTC"  # without JavaScript


def assert_kept_in(html: str, form: dict, zone: str, typed: dict) -> None:
    """A refused form gives back what was typed, in the zone it was typed
    in: no `data-utc` (no second conversion), `tz` kept, labels naming it."""
    assert form["inputs"]["tz"] == {"type": "hidden", "name": "tz", "value": zone}
    for name, value in typed.items():
        attrs = form["inputs"][name]
        assert attrs["value"] == value and "data-utc" not in attrs, attrs
        label = rf'<label for="{attrs["id"]}">[^<]*\(<span>{re.escape(zone)}</span>\)'
        assert re.search(label, html), name


@pytest.fixture
def owner(world) -> Client:
    client = Client()
    client.force_login(world.owner)
    return client


def stored_quiz(world, **times) -> Quiz:
    quiz = Quiz.objects.get(pk=create(world, shuffle=False)["id"])
    # No time limit: only the dates are under test here.
    Quiz.objects.filter(pk=quiz.pk).update(time_limit=None, **times)
    quiz.refresh_from_db()
    return quiz


def stored_assignment(world) -> Assignment:
    return assignment_create(
        cohort=world.cohort,
        actor=world.owner,
        title="Week 1",
        opens_at=OPENS,
        due_at=CLOSES,
        items=[ItemSpec("exercise", "ex-a")],
    )


# The quiz form: edit, then new.


@pytest.mark.parametrize("zone", ZONES)
def test_quiz_edit_keeps_its_dates_and_reads_typed_ones_in_the_zone(
    owner, world, quiz_course, zone
):
    quiz = stored_quiz(world, opens_at=OPENS, closes_at=CLOSES)
    url = f"/instructor/quizzes/{quiz.pk}/edit/"
    form = page_form(owner, url, id="quiz-form")
    assert_converted_by_the_script(form, "opens_at", "closes_at")
    assert form["inputs"]["opens_at"]["data-utc"] == "2031-01-15T08:30:17Z"
    assert form["inputs"]["opens_at"]["value"] == "2031-01-15T08:30"  # UTC
    as_the_script_fills_it(form, zone)

    saved = owner.post(url, data(form))
    assert saved.status_code == 302, saved.content.decode()[:2000]
    quiz.refresh_from_db()
    assert (quiz.opens_at, quiz.closes_at) == (OPENS, CLOSES)  # to the second

    saved = owner.post(url, data(form, opens_at="2031-03-01T09:15"))
    assert saved.status_code == 302
    quiz.refresh_from_db()
    assert quiz.opens_at == zoned("2031-03-01T09:15", zone)
    assert quiz.closes_at == CLOSES


def test_quiz_edit_without_javascript_is_utc_and_keeps_its_dates(
    owner, world, quiz_course
):
    quiz = stored_quiz(world, opens_at=OPENS, closes_at=CLOSES)
    url = f"/instructor/quizzes/{quiz.pk}/edit/"
    page = owner.get(url).content.decode()
    assert '<label for="q-opens">Opens (<span data-zone-name>UTC</span>)' in page
    form = FormReader(page).form(id="quiz-form")
    assert owner.post(url, data(form)).status_code == 302
    quiz.refresh_from_db()
    assert (quiz.opens_at, quiz.closes_at) == (OPENS, CLOSES)


@pytest.mark.parametrize("zone", ZONES)
def test_quiz_new_reads_the_zone_and_a_refusal_keeps_it(
    owner, world, quiz_course, zone
):
    url = f"/instructor/cohorts/{world.cohort.pk}/quizzes/new/"
    form = as_the_script_fills_it(page_form(owner, url, id="quiz-form"), zone)
    assert_converted_by_the_script(
        page_form(owner, url, id="quiz-form"), "opens_at", "closes_at"
    )
    typed = {"opens_at": "2031-11-01T09:00", "closes_at": "2031-11-08T17:30"}
    body = data(form, title="Zoned", slots="1: lesson:first-lesson", **typed)

    refused = owner.post(url, {**body, "slots": ["one: lesson:x"]})
    assert refused.status_code == 400
    html = refused.content.decode()
    again = FormReader(html).form(id="quiz-form")
    assert_kept_in(html, again, zone, typed)
    # The re-rendered page, sent again as it stands (the script leaves it).
    made = owner.post(url, data(as_the_script_fills_it(again, "Europe/Paris")))
    assert made.status_code == 400  # still the bad slots
    fixed = data(again, slots="1: lesson:first-lesson")
    assert owner.post(url, fixed).status_code == 302
    quiz = Quiz.objects.get(title="Zoned")
    assert quiz.opens_at == zoned(typed["opens_at"], zone)
    assert quiz.closes_at == zoned(typed["closes_at"], zone)


# The quiz page's accommodation form.


@pytest.mark.parametrize("zone", ZONES)
def test_an_accommodation_close_is_read_in_the_zone(owner, world, quiz_course, zone):
    quiz = stored_quiz(world)
    url = f"/instructor/quizzes/{quiz.pk}/"
    form = page_form(owner, url, action="/accommodations/")
    assert_converted_by_the_script(form, "closes_at")
    assert form["inputs"]["closes_at"]["data-utc"] == ""  # blank: nothing to move
    as_the_script_fills_it(form, zone)
    typed = "2031-02-03T23:45"
    saved = owner.post(
        form["attrs"]["action"], data(form, learner="leo", closes_at=typed)
    )
    assert saved.status_code == 302
    assert QuizAccommodation.objects.get(learner=world.leo).closes_at == zoned(
        typed, zone
    )


# The assignment form: edit, then new.


@pytest.mark.parametrize("zone", ZONES)
def test_assignment_edit_keeps_its_dates_and_reads_typed_ones_in_the_zone(
    owner, world, course, zone
):
    assignment = stored_assignment(world)
    url = f"/instructor/assignments/{assignment.pk}/edit/"
    form = page_form(owner, url, id="assignment-form")
    assert_converted_by_the_script(form, "opens_at", "due_at")
    as_the_script_fills_it(form, zone)

    assert owner.post(url, data(form)).status_code == 302
    assignment.refresh_from_db()
    assert (assignment.opens_at, assignment.due_at) == (OPENS, CLOSES)

    assert owner.post(url, data(form, due_at="2031-08-01T00:15")).status_code == 302
    assignment.refresh_from_db()
    assert assignment.due_at == zoned("2031-08-01T00:15", zone)
    assert assignment.opens_at == OPENS


@pytest.mark.parametrize("zone", ZONES)
def test_assignment_new_reads_the_zone_and_a_refusal_keeps_it(
    owner, world, course, zone
):
    url = f"/instructor/cohorts/{world.cohort.pk}/assignments/new/"
    form = as_the_script_fills_it(page_form(owner, url, id="assignment-form"), zone)
    assert_converted_by_the_script(
        page_form(owner, url, id="assignment-form"), "opens_at", "due_at"
    )
    typed = {"opens_at": "2031-06-08T09:00", "due_at": "2031-06-01T09:00"}
    body = data(form, title="Zoned", exercise="ex-a", **typed)
    refused = owner.post(url, body)
    assert refused.status_code == 400  # due before it opens
    html = refused.content.decode()
    again = FormReader(html).form(id="assignment-form")
    assert_kept_in(html, again, zone, typed)
    fixed = data(again, due_at="2031-06-15T18:30")
    assert owner.post(url, fixed).status_code == 302
    assignment = Assignment.objects.get(title="Zoned")
    assert assignment.opens_at == zoned("2031-06-08T09:00", zone)
    assert assignment.due_at == zoned("2031-06-15T18:30", zone)


# The assignment page's extension form.


@pytest.mark.parametrize("zone", ZONES)
def test_an_extension_is_read_in_the_zone(owner, world, course, zone):
    assignment = stored_assignment(world)
    url = f"/instructor/assignments/{assignment.pk}/"
    form = page_form(owner, url, action="/extension")
    assert_converted_by_the_script(form, "due_at")
    as_the_script_fills_it(form, zone)
    typed = "2031-09-01T05:00"
    saved = owner.post(form["attrs"]["action"], data(form, learner="lea", due_at=typed))
    assert saved.status_code == 302
    assert assignment.extensions.get().due_at == zoned(typed, zone)


# The edges, on the quiz form (every form reads its fields the same way).


@pytest.mark.parametrize(
    ("zone", "skipped", "twice", "first"),
    [  # west and east of UTC: the spring gap, the autumn repeat
        (WEST, "2031-03-09T02:30", "2031-11-02T01:30", "2031-11-02T08:30"),
        ("Europe/Berlin", "2031-03-30T02:30", "2031-10-26T02:30", "2031-10-26T00:30"),
    ],
)
def test_a_skipped_local_time_is_refused_and_a_repeated_one_is_the_first(
    owner, world, quiz_course, zone, skipped, twice, first
):
    url = f"/instructor/cohorts/{world.cohort.pk}/quizzes/new/"
    form = as_the_script_fills_it(page_form(owner, url, id="quiz-form"), zone)
    body = data(form, title="Edge", slots="1: lesson:first-lesson")
    refused = owner.post(url, {**body, "opens_at": skipped, "closes_at": twice})
    assert refused.status_code == 400
    text = refused.content.decode()
    assert f"Opens: {skipped.replace('T', ' ')} does not exist in {zone}" in text
    assert not Quiz.objects.filter(title="Edge").exists()
    made = owner.post(url, {**body, "opens_at": "2031-01-01T00:00", "closes_at": twice})
    assert made.status_code == 302
    quiz = Quiz.objects.get(title="Edge")
    assert quiz.closes_at == datetime.fromisoformat(first).replace(tzinfo=UTC)


def test_the_second_of_a_repeated_hour_survives_an_unchanged_save(
    owner, world, quiz_course
):
    second = datetime(2031, 11, 2, 9, 30, 5, tzinfo=UTC)  # 01:30:05 PST
    quiz = stored_quiz(world, opens_at=OPENS, closes_at=second)
    url = f"/instructor/quizzes/{quiz.pk}/edit/"
    form = as_the_script_fills_it(page_form(owner, url, id="quiz-form"), WEST)
    assert dict(form["fields"])["closes_at"] == "2031-11-02T01:30"
    assert owner.post(url, data(form)).status_code == 302
    quiz.refresh_from_db()
    assert quiz.closes_at == second


@pytest.mark.parametrize("tz", ["America", "Mars/Olympus", "x" * 300, "../etc"])
def test_a_zone_that_is_none_reads_as_utc(owner, world, course, tz):
    assignment = stored_assignment(world)
    saved = owner.post(
        f"/instructor/assignments/{assignment.pk}/extensions/",
        {"learner": "lea", "due_at": "2031-09-01T05:00", "tz": tz},
    )
    assert saved.status_code == 302
    assert assignment.extensions.get().due_at == datetime(2031, 9, 1, 5, tzinfo=UTC)


def test_a_time_out_of_range_in_the_zone_is_refused_not_a_crash(
    owner, world, quiz_course
):
    url = f"/instructor/cohorts/{world.cohort.pk}/quizzes/new/"
    form = as_the_script_fills_it(page_form(owner, url, id="quiz-form"), "Asia/Tokyo")
    body = data(form, title="Old", slots="1: lesson:first-lesson")
    refused = owner.post(
        url, {**body, "opens_at": "0001-01-01T00:00", "closes_at": "2031-01-01T00:00"}
    )
    assert refused.status_code == 400 and b"Opens: give a date" in refused.content


def test_form_time_keeps_the_stored_value_only_for_its_own_minute():
    stored = datetime(2031, 1, 15, 8, 30, 17, tzinfo=UTC)  # 14:00:17 in Kolkata
    post = {"tz": EAST, "opens_at": "2031-01-15T14:00"}
    assert form_time(post, "opens_at", stored=stored) is stored
    post["opens_at"] = "2031-01-15T14:01"
    assert form_time(post, "opens_at", stored=stored) == stored.replace(
        minute=31, second=0
    )
    post["opens_at"] = "2031-01-15T14:00:17"  # with seconds: the same instant
    assert form_time(post, "opens_at", stored=stored) is stored
    post["opens_at"] = "2031-01-15T14:00:00"  # zero seconds: the minute shown
    assert form_time(post, "opens_at", stored=stored) is stored
    post["opens_at"] = "2031-01-15T14:00:16"
    assert form_time(post, "opens_at", stored=stored) == stored - timedelta(seconds=1)
    assert form_time({"tz": EAST}, "opens_at", required=False) is None
    with pytest.raises(FormTimeError) as refused:
        form_time({"tz": EAST, "due_at": "tomorrow"}, "due_at")
    assert refused.value.field == "due_at" and str(refused.value).startswith("Due:")
