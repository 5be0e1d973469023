"""The deadline drill's learners and instructors, for Locust (headless).

Started by benchmarks/deadline_drill.py, which sets DRILL_* in the
environment and reads back DRILL_LEDGER: one JSON line per thing the server
acknowledged (a quiz save, a quiz submit, a submission answered 202, a
verdict seen) or failed to (a 5xx, with its time), so the drill can check
from the database that nothing acknowledged was lost.

A learner, once, over the deadline window, with think times drawn from an
exponential distribution (mean DRILL_THINK seconds, capped at 3x): signs in,
opens the home page and a lesson, answers one of its self-checks, starts
the timed quiz, answers its questions one at a time with an autosave every
DRILL_SAVE_EVERY seconds, reloads the quiz page once, submits it; opens an
exercise page and submits code three times (each drawn: 40% right, 30%
wrong, 20% heavy, 10% an infinite loop), each followed on its event stream
to the verdict (polling the submission if the stream fails), and reads
the result. An instructor loops over the gradebook, the quiz's results and
its item analysis.

Like the pages, a client retries what the server asks it to: a 503 with
Retry-After (the database away), or a request that never reached a web
process (connection refused or reset, nginx's 502 for a GET). A POST that
may have reached one is not sent twice.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import re
import time

from locust import HttpUser, between, constant, events, task

LEDGER = os.environ.get("DRILL_LEDGER", "drill-ledger.jsonl")
PASSWORD = os.environ.get("DRILL_PASSWORD", "drill-pass-123")
QUIZ_ID = int(os.environ.get("DRILL_QUIZ_ID", "0"))
COHORT_ID = int(os.environ.get("DRILL_COHORT_ID", "0"))
THINK = float(os.environ.get("DRILL_THINK", "3"))
SAVE_EVERY = float(os.environ.get("DRILL_SAVE_EVERY", "4"))
LESSONS = os.environ.get("DRILL_LESSONS", "").split(",")
CODES = json.loads(os.environ.get("DRILL_CODES", "{}"))  # kind -> [[slug, code]]
MIX = [("right", 0.4), ("wrong", 0.3), ("heavy", 0.2), ("loop", 0.1)]
RETRY_FOR = 90.0  # seconds a client keeps retrying before it reports a failure
_learners = itertools.count()
_instructors = itertools.count()
_ledger = open(LEDGER, "a", buffering=1)  # noqa: SIM115 - for the whole run


def record(kind: str, **fields) -> None:
    _ledger.write(json.dumps({"kind": kind, "at": time.time(), **fields}) + "\n")


@events.quitting.add_listener
def _close(**_kw) -> None:
    _ledger.close()


def think(rng: random.Random, mean: float = THINK) -> None:
    time.sleep(min(rng.expovariate(1 / mean), 3 * mean) if mean > 0 else 0)


class Client:
    """Requests as a page makes them: CSRF from the cookie, retries as above."""

    def __init__(self, user: HttpUser, who: str):
        self.user, self.who = user, who

    def call(self, method: str, path: str, *, name: str | None = None, **kw):
        name = name or path
        csrf = self.user.client.cookies.get("csrftoken")
        headers = {"X-CSRFToken": csrf, "Referer": self.user.host + "/"} if csrf else {}
        headers.update(kw.pop("headers", {}))
        deadline = time.monotonic() + RETRY_FOR
        while True:
            with self.user.client.request(
                method, path, name=name, headers=headers, catch_response=True, **kw
            ) as response:
                status = response.status_code
                if status >= 500 or status == 0:
                    record("5xx", who=self.who, method=method, path=name, status=status)
                sent = status != 0 or "refused" not in str(response.error or "")
                again = status == 503 or (status == 0 and not sent)
                again = again or (status in (0, 502) and method == "GET")
                if again and time.monotonic() < deadline:
                    response.success()  # counted once it is answered
                    wait = response.headers.get("Retry-After", "1")
                    time.sleep(min(float(wait) if wait.isdigit() else 1.0, 5.0))
                    continue
                if status >= 400 or status == 0:
                    response.failure(f"{status}")
                else:
                    response.success()
                return response

    def login(self, username: str) -> None:
        page = self.call("GET", "/accounts/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
        self.call(
            "POST",
            "/accounts/login/",
            data={
                "username": username,
                "password": PASSWORD,
                "csrfmiddlewaretoken": token.group(1) if token else "",
            },
            allow_redirects=False,
        )


class Learner(HttpUser):
    # Once through the deadline, then the results page stays open. A learner
    # that stopped would be replaced by Locust with a new one, under a name
    # with no account: a 300-learner run made 840 of them, each signing in
    # with a wrong password. A waiting user is stopped at once at the end.
    wait_time = constant(24 * 3600)

    def on_start(self) -> None:
        self.n = next(_learners)
        self.rng = random.Random(self.n)
        self.api = Client(self, f"drill{self.n}")

    @task
    def deadline(self) -> None:
        self.api.login(f"drill{self.n}")
        self.api.call("GET", "/", name="home")
        self.lesson()
        think(self.rng)
        self.quiz()
        think(self.rng)
        slug = self.rng.choice(CODES["right"])[0]
        self.api.call("GET", f"/exercises/{slug}/", name="exercise page")
        for _ in range(3):
            think(self.rng)
            self.submit()

    def lesson(self) -> None:
        slug = self.rng.choice(LESSONS)
        page = self.api.call("GET", f"/lessons/{slug}/", name="lesson")
        found = re.findall(rf"/lessons/{slug}/questions/(\d+)/answer/", page.text)
        if found:
            think(self.rng)
            self.api.call(
                "POST",
                f"/lessons/{slug}/questions/{found[0]}/answer/",
                name="self-check",
                data={"answer": "0"},
                headers={"Accept": "application/json"},
            )

    def quiz(self) -> None:
        started = self.api.call(
            "POST", f"/api/v1/quizzes/{QUIZ_ID}/attempts/", name="quiz start", json={}
        )
        if started.status_code not in (200, 201):
            return
        attempt = started.json()
        aid, numbers = attempt["id"], [q["number"] for q in attempt["questions"]]
        record("quiz start", who=self.api.who, attempt=aid)
        answers: dict[str, int] = {}
        reload_at = self.rng.randrange(len(numbers))
        for index, number in enumerate(numbers):
            answers[str(number)] = self.rng.randrange(2)
            time.sleep(SAVE_EVERY * self.rng.uniform(0.5, 1.5))
            began = time.monotonic()
            saved = self.api.call(
                "PATCH",
                f"/api/v1/attempts/{aid}/",
                name="quiz save",
                json={"answers": answers},
            )
            if saved.status_code == 200:
                ms = (time.monotonic() - began) * 1000
                record(
                    "quiz save", who=self.api.who, attempt=aid, answers=answers, ms=ms
                )
            if index == reload_at:
                self.api.call("GET", f"/quizzes/attempts/{aid}/", name="quiz page")
        done = self.api.call(
            "POST", f"/api/v1/attempts/{aid}/submit/", name="quiz submit", json={}
        )
        if done.status_code == 200:
            record("quiz submit", who=self.api.who, attempt=aid)

    def submit(self) -> None:
        kind = self.rng.choices([k for k, _ in MIX], [w for _, w in MIX])[0]
        slug, code = self.rng.choice(CODES[kind])
        sent = time.time()
        created = self.api.call(
            "POST",
            f"/api/v1/exercises/{slug}/submissions/",
            name="submit",
            json={"code": code},
        )
        if created.status_code != 202:
            return
        pk = created.json()["id"]
        record("submission", who=self.api.who, id=pk, code_kind=kind, slug=slug)
        verdict = self.follow(pk)
        record(
            "verdict",
            who=self.api.who,
            id=pk,
            status=verdict,
            seconds=time.time() - sent,
        )
        self.api.call("GET", f"/api/v1/submissions/{pk}/", name="result")

    def follow(self, pk: str) -> str | None:
        """The verdict from the event stream; polling once the stream fails."""
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            try:
                with self.client.get(
                    f"/api/v1/submissions/{pk}/events/",
                    name="event stream",
                    stream=True,
                    headers={"Accept": "text/event-stream"},
                    catch_response=True,
                    timeout=90,
                ) as stream:
                    if stream.status_code == 200:
                        stream.success()
                        for line in stream.iter_lines(decode_unicode=True):
                            if line and line.startswith("data: "):
                                state = json.loads(line[6:])
                                if state.get("terminal"):
                                    return state["status"]
                        continue  # the server ended it: reconnect, as a page
                    stream.success()  # refused (a cap) or away: poll instead
            except Exception:  # noqa: BLE001 - a dropped stream is retried
                pass
            state = self.api.call("GET", f"/api/v1/submissions/{pk}/", name="poll")
            if state.status_code == 200 and state.json()["status"] in (
                "passed",
                "failed",
                "error",
                "cancelled",
            ):
                return state.json()["status"]
            time.sleep(2)
        return None


class Instructor(HttpUser):
    wait_time = between(2, 6)
    fixed_count = int(os.environ.get("DRILL_INSTRUCTORS", "1"))

    def on_start(self) -> None:
        self.api = Client(self, f"teacher0 ({next(_instructors)})")
        self.api.login("teacher0")

    @task
    def look(self) -> None:
        self.api.call(
            "GET", f"/instructor/cohorts/{COHORT_ID}/gradebook/", name="gradebook"
        )
        self.api.call("GET", f"/api/v1/quizzes/{QUIZ_ID}/results/", name="quiz results")
        self.api.call(
            "GET", f"/instructor/quizzes/{QUIZ_ID}/statistics/", name="item analysis"
        )
