"""`course` in a subprocess against gunicorn + a Celery worker, as a learner would."""

from __future__ import annotations

import json
import socket
import stat
import subprocess
import sys

import pytest
import requests
import yaml

from tests.client.conftest import course, course_login
from tests.conftest import PROJECT_ROOT
from tests.pipeline.conftest import free_port

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("client")]

TIE = yaml.safe_load((PROJECT_ROOT / "content/exercises/tie-weights.yaml").read_text())
WRONG = next(w for w in TIE["wrong_solutions"] if w["diagnosis"] == "copied-not-shared")


def log_in(server, home, username: str, url: str | None = None):
    result = course_login(home, url or server.url, username)
    assert result.returncode == 0, result.stderr
    return result


def refused(result, *phrases: str) -> str:
    """Exit 2, one line on stderr that says why, no traceback."""
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    line = result.stderr.strip()
    assert "Traceback" not in result.stderr + result.stdout
    assert len(line.splitlines()) == 1, line
    for phrase in phrases:
        assert phrase in line, line
    return line


def test_log_in_fetch_check_and_submit(course_server, course_home):
    home, user = course_home, course_server.user("cli-journey")
    outputs = []
    login = log_in(course_server, home, user)
    outputs.append(login)
    creds = home / "config" / "credentials.json"
    assert stat.S_IMODE(creds.stat().st_mode) == 0o600
    assert stat.S_IMODE(creds.parent.stat().st_mode) == 0o700
    token = json.loads(creds.read_text())["token"]
    assert len(token) >= 20

    listed = course(home, "exercises", "--json")
    outputs.append(listed)
    items = {item["slug"]: item for item in json.loads(listed.stdout)}
    assert len(items) >= 60
    assert items["tie-weights"]["status"] == "not started"
    assert items["tie-weights"]["title"] == TIE["title"]

    got = course(home, "get", "tie-weights")
    outputs.append(got)
    assert got.returncode == 0, got.stderr
    starter = home / "tie_weights.py"
    assert starter.read_text() == TIE["starter"]
    assert "untied" in got.stdout and TIE["signature"] in got.stdout

    (home / "right.py").write_text(TIE["solution"])
    (home / "wrong.py").write_text(WRONG["code"])
    # Offline from here: the saved exercise is enough for a local check.
    creds.write_text(
        json.dumps({**json.loads(creds.read_text()), "url": "http://127.0.0.1:9"})
    )
    unchecked = course(home, "check", "tie-weights", "tie_weights.py")
    assert unchecked.returncode == 1, unchecked.stdout + unchecked.stderr
    right = course(home, "check", "tie-weights", "right.py")
    assert right.returncode == 0, right.stdout + right.stderr
    assert "tie-weights: passed" in right.stdout
    assert "gpt2 structure" in right.stdout and "tiny gradient" in right.stdout
    assert "mini gradient" not in right.stdout  # a hidden case: server only
    assert "Hidden cases run on the server when you submit" in right.stdout
    wrong = course(home, "check", "tie-weights", "wrong.py", "--json")
    assert wrong.returncode == 1
    verdict = json.loads(wrong.stdout)
    assert verdict["status"] == "failed" and verdict["local"] is True
    assert "copied-not-shared" in {c.get("diagnosis") for c in verdict["checks"]}
    assert not any(c.get("hidden") for c in verdict["checks"])

    outputs.append(log_in(course_server, home, user))
    submitted = course(home, "submit", "tie-weights", "right.py")
    outputs.append(submitted)
    assert submitted.returncode == 0, submitted.stdout + submitted.stderr
    assert "tie-weights: passed" in submitted.stdout
    assert "(hidden case)" in submitted.stdout  # the server ran them
    review = next(
        line for line in submitted.stdout.splitlines() if line.startswith("Review: ")
    )
    assert review.startswith(f"Review: {course_server.url}/submissions/")
    session = requests.Session()
    page = session.get(review.split(" ", 1)[1], timeout=10, allow_redirects=False)
    assert page.status_code == 302  # the learner's own page, behind log-in

    failed = course(home, "submit", "tie-weights", "wrong.py", "--json")
    outputs.append(failed)
    assert failed.returncode == 1
    result = json.loads(failed.stdout)
    assert result["status"] == "failed" and result["html_url"].endswith(
        f"/submissions/{result['id']}/"
    )

    after = {
        i["slug"]: i for i in json.loads(course(home, "exercises", "--json").stdout)
    }
    assert after["tie-weights"]["status"] == "passed"
    for output in outputs:
        assert token not in output.stdout + output.stderr


def test_every_bad_input_is_one_line_and_exit_code_2(course_server, course_home):
    home, user = course_home, course_server.user("cli-bad-input")
    refused(
        course_login(home, course_server.url, user, "not-the-password"),
        "wrong username or password",
    )
    refused(
        course_login(home, f"http://127.0.0.1:{free_port()}", user),
        "cannot reach",
    )
    refused(course(home, "login", "course.example.org"), "not a server URL")
    refused(course(home, "exercises"), "not logged in")
    log_in(course_server, home, user)
    refused(
        course(home, "get", "no-such-exercise"), "no exercise named 'no-such-exercise'"
    )
    refused(course(home, "get", "../../etc"), "not an exercise slug")
    refused(
        course(home, "check", "tie-weights", "missing.py"), "missing.py: no such file"
    )
    (home / "latin1.py").write_bytes(b"# caf\xe9\ndef tie_weights(model):\n    pass\n")
    refused(course(home, "submit", "tie-weights", "latin1.py"), "not UTF-8")
    (home / "big.py").write_text("x = 1\n" * 20_000)
    refused(course(home, "submit", "tie-weights", "big.py"), "65,536 bytes")
    (home / "right.py").write_text(TIE["solution"])
    refused(course(home, "submit", "no-such-exercise", "right.py"), "no exercise named")
    refused(course(home), "(see `course --help`)")
    refused(course(home, "check", "tie-weights"), "required")
    as_json = course(home, "--json", "get", "no-such-exercise")
    refused(as_json)
    assert "no exercise named" in json.loads(as_json.stdout)["error"]

    # A token revoked elsewhere (another device logged out) and an expired one.
    token = json.loads((home / "config/credentials.json").read_text())["token"]
    gone = requests.delete(
        course_server.url + "/api/v1/auth/token/",
        headers={"Authorization": f"Token {token}"},
        timeout=10,
    )
    assert gone.status_code == 204
    refused(course(home, "exercises"), "expired or revoked", "course login")
    log_in(course_server, home, user)
    course_server.python(
        "from datetime import timedelta\n"
        "from django.utils import timezone\n"
        "from quiz.core.models import ApiToken\n"
        f"ApiToken.objects.filter(user__username={user!r})"
        ".update(created_at=timezone.now() - timedelta(days=400))\n"
    )
    refused(course(home, "submit", "tie-weights", "right.py"), "expired or revoked")


def test_rate_limits_say_when_to_try_again(course_server, course_home):
    home = course_home
    locked = course_server.user("cli-locked-out")
    for _ in range(5):
        course_login(home, course_server.url, locked, "wrong")
    line = refused(
        course_login(home, course_server.url, locked),
        "try again in",
    )
    assert " s (at " in line

    strict = course_server.gunicorn(workers=1, SUBMISSION_RATE="1/min")
    log_in(course_server, home, course_server.user("cli-throttled"), url=strict)
    (home / "right.py").write_text(TIE["solution"])
    first = course(home, "submit", "tie-weights", "right.py")
    assert first.returncode == 0, first.stdout + first.stderr
    line = refused(course(home, "submit", "tie-weights", "right.py"), "try again in")
    assert "throttled" in line


def test_an_outdated_client_is_told_what_to_install(course_server, course_home):
    home = course_home
    log_in(course_server, home, course_server.user("cli-outdated"))

    def outdated(*args: str):
        # The learner's engine is an older release: the client sends its version.
        code = (
            "import sys, grading_engine\n"
            "grading_engine.__version__ = '0.9.0'\n"
            "from course.cli import main\n"
            "raise SystemExit(main(sys.argv[1:]))\n"
        )
        return subprocess.run(
            [sys.executable, "-c", code, *args],
            cwd=home,
            env={
                "COURSE_CONFIG_DIR": str(home / "config"),
                "HOME": str(home),
                "PATH": "/usr/bin:/bin",
            },
            capture_output=True,
            text=True,
            timeout=120,
        )

    line = refused(outdated("get", "tie-weights"), "grading-engine 1.0.0", "0.9.0")
    assert f"pip install {course_server.url}/client/grading_engine-" in line
    listed = outdated("exercises")
    assert listed.returncode == 0, listed.stderr
    assert (
        "course: warning: This server grades with grading-engine 1.0.0" in listed.stderr
    )


def test_check_and_submit_refuse_the_same_oversized_file(course_server, course_home):
    """The server's limit (64 KiB), not the engine's 1 MiB, holds for both."""
    home = course_home
    log_in(course_server, home, course_server.user("cli-oversized"))
    assert course(home, "get", "tie-weights").returncode == 0
    code = TIE["solution"] + "\n"
    code += "#" * (70_080 - len(code.encode())) + "\n"
    (home / "big.py").write_text(code)
    assert (home / "big.py").stat().st_size == 70_081
    message = "the code is 70,081 bytes; the limit is 65,536 bytes"
    checked = refused(course(home, "check", "tie-weights", "big.py"), message)
    submitted = refused(course(home, "submit", "tie-weights", "big.py"), message)
    assert checked == submitted == f"course: {message}"
    saved = json.loads((home / "config/exercises/tie-weights.json").read_text())
    assert saved["max_code_bytes"] == 65_536  # kept for offline checks


def credentials(home) -> dict:
    return json.loads((home / "config/credentials.json").read_text())


def manage_tokens_login(server, home, username: str):
    """`course login --manage-tokens`: this client may list and revoke tokens."""
    result = course(
        home,
        "login",
        server.url,
        "--username",
        username,
        "--password-stdin",
        "--manage-tokens",
        "--json",
        stdin="client-Secret-123\n",
    )
    assert result.returncode == 0, result.stderr
    return result


def test_each_client_has_its_own_token(course_server, course_home, tmp_path):
    laptop, notebook = course_home, tmp_path / "notebook"
    notebook.mkdir()
    user = course_server.user("cli-two-machines")
    manage_tokens_login(course_server, laptop, user)
    named = course(
        notebook,
        "login",
        course_server.url,
        "--username",
        user,
        "--password-stdin",
        "--name",
        "lab notebook",
        stdin="client-Secret-123\n",
    )
    assert named.returncode == 0, named.stderr
    assert credentials(laptop)["token"] != credentials(notebook)["token"]

    listed = course(laptop, "tokens", "--json")
    assert listed.returncode == 0, listed.stderr
    tokens = json.loads(listed.stdout)
    names = {t["name"] for t in tokens}
    assert names == {"lab notebook", f"course on {socket.gethostname()}"}
    assert [t["current"] for t in tokens].count(True) == 1
    assert "lab notebook" in course(laptop, "tokens").stdout
    current = next(t for t in tokens if t["current"])
    assert credentials(laptop)["token"].startswith(current["prefix"])
    assert credentials(laptop)["token"] not in listed.stdout

    assert course(laptop, "logout").returncode == 0
    assert course(notebook, "exercises").returncode == 0  # still logged in
    refused(course(laptop, "exercises"), "not logged in")

    manage_tokens_login(course_server, laptop, user)
    mine = {t["name"]: t for t in json.loads(course(laptop, "tokens", "--json").stdout)}
    gone = course(laptop, "tokens", "revoke", str(mine["lab notebook"]["id"]))
    assert gone.returncode == 0, gone.stderr
    assert "lab notebook" in gone.stdout
    refused(course(notebook, "exercises"), "expired or revoked")
    assert course(laptop, "exercises").returncode == 0
    refused(course(laptop, "tokens", "revoke", "999999"), "no token")
    refused(course(laptop, "tokens", "revoke", "abc"), "invalid int")

    course_server.python(
        "from django.contrib.auth.models import User\n"
        f"u = User.objects.get(username={user!r})\n"
        "u.set_password('another-Secret-456')\n"
        "u.save()\n"
    )
    refused(course(laptop, "exercises"), "expired or revoked")


def token_scopes(server, username: str) -> list[list[str]]:
    """The scopes of each of the user's tokens, read from the server's database."""
    return json.loads(
        server.python(
            "import json\n"
            "from quiz.core.models import ApiToken\n"
            "print(json.dumps([t.scopes for t in "
            f"ApiToken.objects.filter(user__username={username!r})]))\n"
        )
    )


def test_course_login_asks_for_learn_only(course_server, course_home, tmp_path):
    """Issue 43: the token `course login` keeps does a learner's work and no
    more, even for an instructor: no tokens listed or revoked, no instructor
    action; `--manage-tokens` adds the token scope, and only it."""
    home, user = course_home, course_server.user("cli-scoped")
    course_server.python(
        "from django.contrib.auth.models import User\n"
        "from quiz.core.roles import assign_role\n"
        f"assign_role(User.objects.get(username={user!r}), 'instructor')\n"
    )
    login = log_in(course_server, home, user)
    assert "(learn)" in login.stdout
    assert token_scopes(course_server, user) == [["learn"]]
    assert course(home, "exercises").returncode == 0
    refused(course(home, "tokens"), "'manage-tokens'", "/accounts/", "--manage-tokens")
    refused(course(home, "tokens", "revoke", "1"), "'manage-tokens'")
    token = credentials(home)["token"]
    cohorts = requests.get(
        course_server.url + "/api/v1/cohorts/",
        headers={"Authorization": f"Token {token}"},
        timeout=10,
    )
    assert cohorts.status_code == 403
    assert "lacks the 'teach' scope" in cohorts.json()["detail"]

    other = tmp_path / "manager"
    other.mkdir()
    managed = manage_tokens_login(course_server, other, user)
    assert json.loads(managed.stdout)["scopes"] == ["learn", "manage-tokens"]
    assert sorted(token_scopes(course_server, user)) == [
        ["learn"],
        ["learn", "manage-tokens"],
    ]
    listed = course(other, "tokens", "--json")
    assert listed.returncode == 0, listed.stderr
    assert sorted(t["scopes"] for t in json.loads(listed.stdout)) == [
        ["learn"],
        ["learn", "manage-tokens"],
    ]
