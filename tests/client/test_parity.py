"""Same verdict, proven: `course check` gives the visible checks the server gives.

Three tiers:

1. Structure, every exercise (no web server): the exercise file the client
   stores (GET /api/v1/exercises/<slug>/ and its local-check bundle, saved
   and read back by course.store) makes `course.local.check` call the
   engine's `grade` with the harness and entry point the server's
   `exercise_grade` uses for that Exercise row, and the engine then judges
   the same visible cases with the same tolerances in force, for the row as
   shipped and as an admin would tune it (rtol/atol, budget, lane).
   Recorded by thin wrappers around the engine's `grade` and `judge` that
   call the real functions.
2. Verdicts, every reference and known wrong solution:
   `course.local.check` on the stored file (the client's fork server,
   visible cases only, in a process of its own as on a learner's machine,
   running the wheels the server serves: the learner edition of the engine,
   which judges with the values the server shipped and has no reference)
   and the server's `exercise_grade` with the production runner (a warm
   sandbox pool, one per module; a plain child process where bubblewrap is
   missing) give the same visible checks, numbers masked.
3. End to end, a sample: one exercise's reference and every known wrong
   solution submitted through gunicorn and a Celery worker, as `course
   submit` does, against `course check`. The whole set that way is the
   exhaustive tier (--exhaustive).
"""

from __future__ import annotations

import copy
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml
from course import actions, local, store
from grading_engine import grading
from grading_engine.exercises.base import load_harness

from tests.client.conftest import PASSWORD
from tests.conftest import PROJECT_ROOT

pytestmark = pytest.mark.slow

# A number, with thousands separators but never the comma after it: "got
# 1e-05, expected" and "got 0.25, expected" must mask alike.
NUMBER = re.compile(
    r"[-+]?(?:\d+(?:[,_]\d{3})*(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?", re.IGNORECASE
)
SPECS = {
    spec["slug"]: spec
    for spec in (
        # libyaml's loader: at collection, in every xdist worker.
        yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
        for path in sorted((PROJECT_ROOT / "content/exercises").glob("*.yaml"))
    )
}
SLUGS = sorted(SPECS)
SEED = 20_240_611  # the server's draw, fixed so a failure replays
# The sample that goes through gunicorn + Celery: a heavy exercise (GPT-2
# small) with options of its own, and eleven known solutions.
SAMPLE = "gpt2-forward"
SANDBOX = shutil.which("bwrap") is not None
TOLERANCE_NAMES = [key.upper() for key in grading.TOLERANCE_OPTIONS]


def known_solutions(spec: dict, *, rights: bool = True) -> list[tuple[str, str]]:
    """(which, code) for the reference, the wrong and the right solutions."""
    found = [("reference", spec["solution"])]
    found += [(f"wrong: {w['name']}", w["code"]) for w in spec["wrong_solutions"]]
    if rights:
        found += [(f"right: {r['name']}", r["code"]) for r in spec["right_solutions"]]
    return found


def solutions() -> list[tuple[str, str, str]]:
    """(slug, which, code) for every reference and known wrong solution."""
    return [
        (slug, which, code)
        for slug in SLUGS
        for which, code in known_solutions(SPECS[slug], rights=False)
    ]


def visible(verdict: dict) -> list[tuple]:
    """What both sides must agree on, per visible check, in order; numbers in
    messages are masked (the last digits of a float may differ by machine)."""
    return [
        (
            check["name"],
            check["passed"],
            check.get("diagnosis"),
            NUMBER.sub("#", check.get("message") or ""),
        )
        for check in verdict["checks"]
        if not check.get("hidden")
    ]


def disagreements(which: str, mine: dict, theirs: dict) -> list[str]:
    """Why a local verdict (`mine`) and the server's (`theirs`) differ, if they do."""
    problems = []
    assert mine["local"] is True and not any(c.get("hidden") for c in mine["checks"])
    if which == "reference" or which.startswith("right: "):
        if not mine["status"] == theirs["status"] == "passed":
            problems.append(f"{which}: {mine['status']} here, {theirs['status']} there")
    elif theirs["status"] == "passed":
        problems.append(f"{which}: the server passed a known wrong solution")
    if theirs["status"] == "error" and all(c.get("hidden") for c in theirs["checks"]):
        # It crashed in a hidden case, which a local check never runs.
        if mine["status"] == "error":
            problems.append(f"{which}: crashed in a visible case here only")
        return problems
    here, there = visible(mine), visible(theirs)
    if here != there:
        at = next(
            (i for i, (a, b) in enumerate(zip(here, there)) if a != b),
            min(len(here), len(there)),
        )
        problems.append(
            f"{which}: {len(here)} visible checks here, {len(there)} there; "
            f"the first that differs (#{at + 1}):\n"
            f"  here  {here[at] if at < len(here) else '(none)'}\n"
            f"  there {there[at] if at < len(there) else '(none)'}"
        )
    return problems


# -- the stored exercises and the two runners -------------------------------


@pytest.fixture(scope="module")
def stored(
    django_db_setup, django_db_blocker, tmp_path_factory, client_dist, server_runner
):
    """For every exercise: its Exercise row and the file the client stores,
    as shipped and as tuned in the admin ({"shipped"|"tuned": (row, json)}).

    The content's lessons and exercises are loaded by the production loader
    (without drawing the lessons' figures), the files and their local-check
    bundles (from the session's `make client` build) fetched through the
    API, saved and read back by the client's store, which stays this
    module's (COURSE_CONFIG_DIR); then the database is rolled back. Grading
    reads only the rows' fields, so the tests need no database. An authored
    exercise's bundle is built first, in the server's pool, as a worker
    builds it when its version goes live (grader.local_checks).
    """
    from django.contrib.auth.models import User
    from django.db import transaction
    from django.test import override_settings
    from rest_framework.test import APIClient

    from grader.local_checks import local_check_build
    from grader.models import Exercise
    from grader.verify import exercise_options_problems, harness_option_keys
    from quiz.content.loader import content_load

    found: dict[str, dict[str, tuple]] = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COURSE_CONFIG_DIR", str(tmp_path_factory.mktemp("course")))
        with (
            django_db_blocker.unblock(),
            transaction.atomic(),
            override_settings(CLIENT_DIST_DIR=client_dist),
        ):
            content_load(root=PROJECT_ROOT / "content", figures=False)
            api = APIClient()
            api.force_authenticate(User.objects.create_user("parity-learner"))

            def fetched(row: Exercise) -> tuple:
                response = api.get(f"/api/v1/exercises/{row.slug}/")
                assert response.status_code == 200, response.content
                exercise = response.json()
                store.exercise_save(exercise)
                bundle = api.get(f"/api/v1/exercises/{row.slug}/local-check/")
                assert bundle.status_code == 200, row.slug
                blob = (
                    b"".join(bundle.streaming_content)
                    if bundle.streaming  # a file of `make client`
                    else bundle.content  # an authored exercise's, from its row
                )
                store.local_check_save(row.slug, blob)
                assert local.bundle_current(exercise), row.slug
                return copy.deepcopy(row), store.exercise_load(row.slug)

            for row in Exercise.objects.filter(harness="authored"):
                assert local_check_build(exercise_id=row.pk, runner=server_runner)
            for row in Exercise.objects.order_by("slug"):
                found[row.slug] = {"shipped": fetched(row)}
                # What an admin may set: every option the harness accepts, the
                # tolerances away from the harness's own.
                module = load_harness(row.harness)
                tuned = {}
                for key in harness_option_keys(harness=row.harness):
                    if key.upper() in TOLERANCE_NAMES:
                        tuned[key] = min(1.0, 3 * getattr(module, key.upper()) or 1e-3)
                tuned.update(time_budget_seconds=30, lane="heavy")
                problems = exercise_options_problems(harness=row.harness, options=tuned)
                assert not problems, (row.slug, problems)
                row.options = tuned
                row.save()
                found[row.slug]["tuned"] = fetched(row)
            transaction.set_rollback(True)
        assert sorted(found) == SLUGS
        yield found


@pytest.fixture(scope="module")
def server_runner():
    """The production runner as `exercise_grade` gets it: this process's
    "pool" runner, a warm sandbox pool (one slot) made for this module."""
    from grading_engine.harness.subprocess_runner import SubprocessRunner

    from grader import process_runner

    with pytest.MonkeyPatch.context() as patch:
        if not SANDBOX:
            runner = SubprocessRunner()
            patch.setitem(process_runner._runners, "pool", runner)
            yield runner
            return
        from grading_engine.sandbox import WarmPool

        with WarmPool(1) as pool:
            patch.setitem(process_runner._runners, "pool", pool)
            yield pool


@pytest.fixture(scope="module")
def local_runner():
    """The client's own fork server, for this module alone."""
    from course.forkrunner import ForkRunner

    fresh = ForkRunner()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("course.forkrunner._runner", fresh)
        yield fresh
    if fresh.server:
        fresh.server.kill()
        fresh.server.wait()


# The learner's side of tier 2 in a process of its own, as on a learner's
# machine: course.local.check with the client's own fork server, one request
# (a JSON line: exercise file and code) at a time, one verdict line each,
# after a first line saying where its engine and client come from.
# Judging runs torch in the parent of each runner, so two processes share
# the two cores (one torch thread each) where two threads of one process
# would share torch's global state.
_CLIENT = r"""
import json, os, sys
answer = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)  # whatever else prints goes to stderr
import grading_engine
from course import local
answer.write(json.dumps({"engine": grading_engine.__file__, "client": local.__file__}))
answer.write("\n")
answer.flush()
for line in sys.stdin:
    request = json.loads(line)
    verdict = local.check(request["exercise"], request["code"])
    answer.write(json.dumps(verdict) + "\n")
    answer.flush()
"""


class ClientProcess:
    """`course.local.check` in another process, with the wheels the server
    serves installed (`site`) in place of the checkout's engine and client;
    answers in request order."""

    def __init__(self, site):
        env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(site)}
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _CLIENT],
            cwd=PROJECT_ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.replies: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.replies.put(json.loads(line))
        self.replies.put(None)  # it exited

    def send(self, exercise: dict, code: str) -> None:
        self.proc.stdin.write(json.dumps({"exercise": exercise, "code": code}) + "\n")
        self.proc.stdin.flush()

    def verdict(self) -> dict:
        reply = self.replies.get(timeout=600)
        assert reply is not None, "the client process died (its stderr is above)"
        return reply

    def close(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture(scope="module")
def client_process(stored, learner_install):
    """The learner's side, on the store `stored` filled, running the wheels."""
    client = ClientProcess(learner_install)
    origin = client.verdict()
    assert origin["engine"].startswith(str(learner_install)), origin
    assert origin["client"].startswith(str(learner_install)), origin
    yield client
    client.close()


@pytest.fixture(scope="module")
def one_torch_thread():
    """This process judges while the client process judges: one torch thread
    each, so they share the two cores. Put back afterwards."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def server_grade(row, code: str) -> dict:
    from grader.process_runner import exercise_grade

    return exercise_grade(exercise=row, code=code, seed=SEED, runner_kind="pool")


# -- 1. the same call -------------------------------------------------------


class Recorder:
    """Wraps the engine's `grade` (as the server and the client call it) and
    `judge`; each call records what it was given and the tolerances in force
    while it judged, then runs the real function."""

    def __init__(self, patch: pytest.MonkeyPatch):
        from grader import process_runner

        self.calls: list[dict] = []
        real_grade, real_judge = grading.grade, grading.judge

        def grade(**kwargs):
            self.calls.append(
                {
                    "harness": kwargs["harness"],
                    "entry_point": kwargs["entry_point"],
                    "visible_only": kwargs.get("visible_only", False),
                }
            )
            return real_grade(**kwargs)

        def judge(module, cases, outcome, **kwargs):
            self.calls[-1]["tolerances"] = {
                name: getattr(module, name)
                for name in TOLERANCE_NAMES
                if hasattr(module, name)
            }
            self.calls[-1]["visible cases"] = json.dumps(
                [case for case in cases if not case.get("hidden")], sort_keys=True
            )
            return real_judge(module, cases, outcome, **kwargs)

        # course.local imports grade when it checks; grader.process_runner
        # bound it at import.
        patch.setattr(grading, "grade", grade)
        patch.setattr(process_runner, "grade", grade)
        patch.setattr(grading, "judge", judge)

    def one(self, run) -> dict:
        """The one engine call `run()` makes, as recorded."""
        before = len(self.calls)
        run()
        assert len(self.calls) == before + 1, self.calls[before:]
        return self.calls[-1]


# Code the child runs at once and fails (no entry point): what the engine is
# called with does not depend on the code, and judging it costs nothing.
NOTHING_YET = "# nothing written yet\n"


@pytest.mark.django_db  # the database `stored` uses (the tests use none)
@pytest.mark.xdist_group("client-parity")
@pytest.mark.parametrize("slug", SLUGS)
def test_a_local_check_grades_with_the_servers_harness_cases_and_tolerances(
    stored, server_runner, local_runner, monkeypatch, slug
):
    recorder = Recorder(monkeypatch)
    for variant, (row, exercise) in stored[slug].items():
        there = recorder.one(lambda: server_grade(row, NOTHING_YET))  # noqa: B023
        here = recorder.one(lambda: local.check(exercise, NOTHING_YET))  # noqa: B023
        assert there.pop("visible_only") is False and here.pop("visible_only") is True
        assert there["visible cases"] != "[]", "an exercise with no visible case"
        wanted = {
            key.upper(): float(value)
            for key, value in row.options.items()
            if key.upper() in there["tolerances"]
        }
        assert wanted.items() <= there["tolerances"].items(), (variant, row.options)
        assert here == there, (
            f"{slug} ({variant}, options {row.options}): the client's check is "
            f"not the server's grade:\n  here  {here}\n  there {there}"
        )


# -- 2. the same verdicts ---------------------------------------------------


@pytest.mark.django_db  # the database `stored` uses (the tests use none)
@pytest.mark.xdist_group("client-parity")
@pytest.mark.parametrize("slug", SLUGS)
def test_the_client_and_the_server_agree_on_every_known_solution(
    stored, server_runner, client_process, one_torch_thread, slug
):
    row, exercise = stored[slug]["shipped"]
    _diagnoses_as_loaded()  # an authored exercise's messages come from them
    # The reference and the wrong solutions, as the end-to-end set always
    # compared; the right ones pass the server's grade in test_exercise_files.
    todo = known_solutions(SPECS[slug], rights=False)
    for _, code in todo:
        client_process.send(exercise, code)  # checked there meanwhile
    graded = [server_grade(row, code) for _, code in todo]
    theirs = [verdict.to_dict() for verdict in graded]
    mine = [client_process.verdict() for _ in todo]
    # The server's grades are the production ones, so they also prove what
    # each known solution must get there (test_exercise_files' brute-force
    # tier graded them all a second time for that).
    problems = production_problems(SPECS[slug], todo, graded)
    for (which, _), here, there in zip(todo, mine, theirs, strict=True):
        problems += disagreements(which, {"local": True, **here}, there)
    assert not problems, f"{slug}: " + "\n".join(problems)


def _diagnoses_as_loaded() -> None:
    """The diagnoses' summaries as content_load stored them (`stored` rolled
    its database back): an authored exercise's grade reads its mistakes'
    messages there, as the bundle built in `stored` did."""
    from quiz.content.models import Diagnosis

    text = (PROJECT_ROOT / "content" / "diagnoses.yaml").read_text(encoding="utf-8")
    Diagnosis.objects.bulk_create(
        Diagnosis(slug=item["slug"], summary=item.get("summary", ""))
        for item in yaml.safe_load(text)["diagnoses"]
    )


def production_problems(spec: dict, todo: list[tuple[str, str]], graded) -> list[str]:
    """The reference passes with full marks; each wrong solution fails naming
    the diagnosis its file declares; and each grade that finished used at
    most half of the exercise's production budget in CPU time (the budget
    its options set, else measured from this reference as a worker does):
    its CPU time would have to double under load to change its verdict.
    """
    from tests.grader.test_exercise_files import over_headroom, production_budget

    problems = []
    reference = graded[0]
    if reference.status != "passed" or reference.score != 1.0:
        failed = [c.message for c in reference.checks if not c.passed]
        problems.append(f"reference: {reference.status} {reference.score}: {failed}")
    # A plain child (no bubblewrap) counts wall time: then no CPU budget.
    timed = SANDBOX and reference.cpu_ms is not None
    budget = production_budget(spec, reference) if timed else None
    wrongs = {f"wrong: {w['name']}": w["diagnosis"] for w in spec["wrong_solutions"]}
    for (which, _), verdict in zip(todo, graded, strict=True):
        named = {c.diagnosis for c in verdict.checks if not c.passed}
        declared = wrongs.get(which)
        if declared is not None and declared not in named:
            problems.append(f"{which}: no failed check names {declared!r}: {named}")
        problem = over_headroom(verdict, budget) if timed else None
        if problem is not None:
            problems.append(f"{which}: {problem}")
    return problems


# -- 3. through the web server and a worker ---------------------------------


def submit_and_check(server, username: str, todo: list[tuple[str, str, str]]):
    """Each (slug, which, code) through `course submit` and `course check`."""
    actions.login(server.url, server.user(username), PASSWORD)
    with ThreadPoolExecutor(max_workers=4) as pool:
        remote = [
            pool.submit(actions.submit, s, code, wait=1200) for s, _, code in todo
        ]
        local_ = [actions.check(slug, code) for slug, _, code in todo]
        server_ = [future.result() for future in remote]
    problems = []
    for (slug, which, _), mine, theirs in zip(todo, local_, server_, strict=True):
        problems += [f"{slug} {p}" for p in disagreements(which, mine, theirs)]
    assert not problems, "\n".join(problems)


@pytest.mark.xdist_group("client")
def test_course_check_and_submit_agree_through_the_web_server(
    course_server, course_home
):
    todo = [(slug, which, code) for slug, which, code in solutions() if slug == SAMPLE]
    assert len(todo) >= 5
    submit_and_check(course_server, "parity-sample", todo)
    saved = Path(course_home / "config/exercises" / f"{SAMPLE}.json")
    assert json.loads(saved.read_text())["harness"] == SPECS[SAMPLE]["harness"]


@pytest.mark.exhaustive
@pytest.mark.xdist_group("client")
def test_course_check_and_the_server_agree_on_every_known_solution(
    course_server, course_home
):
    todo = solutions()
    assert len({slug for slug, _, _ in todo}) >= 60
    submit_and_check(course_server, "parity", todo)
