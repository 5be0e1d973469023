"""Same verdict, proven: every exercise's reference and known wrong solutions
get the same visible checks from `course check` as from the server.

The local side calls the function `course check` runs (course.actions.check:
the engine in a child process, visible cases only); the server side submits
through the API to gunicorn and a Celery worker, as `course submit` does.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor

import pytest
import yaml
from course import actions

from tests.client.conftest import PASSWORD
from tests.conftest import PROJECT_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("client")]

# A number, with thousands separators but never the comma after it: "got
# 1e-05, expected" and "got 0.25, expected" must mask alike.
NUMBER = re.compile(
    r"[-+]?(?:\d+(?:[,_]\d{3})*(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?", re.IGNORECASE
)


def solutions() -> list[tuple[str, str, str]]:
    """(slug, which, code) for every reference and known wrong solution."""
    found = []
    for path in sorted((PROJECT_ROOT / "content/exercises").glob("*.yaml")):
        spec = yaml.safe_load(path.read_text())
        found.append((spec["slug"], "reference", spec["solution"]))
        for wrong in spec.get("wrong_solutions") or []:
            found.append((spec["slug"], f"wrong: {wrong['name']}", wrong["code"]))
    return found


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


def test_course_check_and_the_server_agree_on_every_known_solution(
    course_server, course_home
):
    user = course_server.user("parity")
    actions.login(course_server.url, user, PASSWORD)
    todo = solutions()
    assert len({slug for slug, _, _ in todo}) >= 60

    with ThreadPoolExecutor(max_workers=4) as pool:
        remote = [
            pool.submit(actions.submit, s, code, wait=1200) for s, _, code in todo
        ]
        local = [actions.check(slug, code) for slug, _, code in todo]
        server = [future.result() for future in remote]

    problems = []
    for (slug, which, _), mine, theirs in zip(todo, local, server, strict=True):
        assert mine["local"] is True and not any(
            c.get("hidden") for c in mine["checks"]
        )
        if which == "reference" and not (
            mine["status"] == theirs["status"] == "passed"
        ):
            problems.append(
                f"{slug} {which}: {mine['status']} here, {theirs['status']} there"
            )
        if which != "reference" and theirs["status"] == "passed":
            problems.append(f"{slug} {which}: the server passed a known wrong solution")
        crashed_hidden = theirs["status"] == "error" and all(
            c.get("hidden") for c in theirs["checks"]
        )
        if crashed_hidden:
            # It crashed in a hidden case, which a local check never runs.
            if mine["status"] == "error":
                problems.append(f"{slug} {which}: crashed in a visible case here only")
            continue
        if visible(mine) != visible(theirs):
            problems.append(
                f"{slug} {which}:\n  here  {visible(mine)}\n  there {visible(theirs)}"
            )
    assert not problems, "\n".join(problems)
