"""What each command does, as plain functions the CLI and the magics share.

They return plain data and raise CourseError for anything that stops them;
printing is the caller's job (text, JSON or HTML).
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from pathlib import Path

from grading_engine.source import (
    SourceUnreadable,
    code_size,
    code_size_problem,
    read_source,
)

from course import local, store
from course.api import Api
from course.errors import CourseError

TERMINAL = ("passed", "failed", "error", "cancelled")
WAIT_SECONDS = 600.0
# What `course login` asks the server to let its token do: a learner's work
# only. Listing and revoking tokens is `manage-tokens`, asked for only with
# `course login --manage-tokens`; instructor actions (`teach`) never.
LOGIN_SCOPES = ("learn",)
MANAGE_TOKENS = "manage-tokens"


def _api() -> Api:
    creds = store.credentials_load()
    if creds is None:
        raise CourseError("not logged in: run `course login URL` first")
    return Api(creds["url"], creds["token"])


def read_code(path: str | Path) -> str:
    try:
        return read_source(path)
    except SourceUnreadable as exc:
        raise CourseError(str(exc)) from None


def default_token_name() -> str:
    """What a token is called when `course login` is not given --name."""
    return f"course on {socket.gethostname() or 'this machine'}"[:100]


def login(
    url: str,
    username: str,
    password: str,
    *,
    name: str = "",
    manage_tokens: bool = False,
) -> dict:
    """Trade a password for this client's own API token and keep it (never shown).

    The token may do a learner's work (`learn`) and, with `manage_tokens`,
    list and revoke the user's tokens; nothing else. Other machines keep
    their tokens; this machine's previous token for the same server, which it
    is about to forget, is revoked.
    """
    api = Api(url)
    if not username or not password:
        raise CourseError("a username and a password are needed")
    name = name.strip() or default_token_name()
    if len(name) > 100:
        raise CourseError("the token's name is over 100 characters")
    scopes = [*LOGIN_SCOPES, *([MANAGE_TOKENS] if manage_tokens else [])]
    response = api.call(
        "POST",
        "/api/v1/auth/token/",
        json={
            "username": username,
            "password": password,
            "name": name,
            "scopes": scopes,
        },
        expect=(200, 400),
    )
    if response.status_code == 400:
        raise CourseError(f"log-in refused by {api.url}: wrong username or password")
    try:
        body = response.json()
        token = body["token"]
    except (ValueError, KeyError, TypeError):
        raise CourseError(f"{api.url} did not answer like a course server") from None
    try:
        previous = store.credentials_load()
    except CourseError:
        previous = None  # damaged: replaced below
    path = store.credentials_save(
        url=api.url, username=username, token=token, expires_at=body.get("expires_at")
    )
    if previous and previous["url"] == api.url and previous["token"] != token:
        _revoke(previous)
    return {
        "url": api.url,
        "username": username,
        "name": body.get("name", name),
        "scopes": body.get("scopes", scopes),
        "expires_at": body.get("expires_at"),
        "credentials": str(path),
    }


def _revoke(creds: dict) -> bool:
    """Revoke a saved token on its server; False if the server did not answer."""
    try:
        Api(creds["url"], creds["token"]).call(
            "DELETE", "/api/v1/auth/token/", expect=(204, 401)
        )
    except CourseError:
        return False  # offline: the token still expires on its own
    return True


def logout() -> dict:
    """Revoke this client's token on the server (if it answers) and forget it
    here; the user's other clients stay logged in."""
    creds = store.credentials_load()
    if creds is None:
        return {"logged_out": False}
    revoked = _revoke(creds)
    store.credentials_forget()
    return {"logged_out": True, "revoked": revoked}


def tokens() -> list[dict]:
    """The user's tokens, one per logged-in client (`current` is this one);
    this client's token needs the manage-tokens scope for it."""
    api = _api()
    response = api.call("GET", "/api/v1/auth/tokens/", expect=(200, 403))
    if response.status_code == 403:
        raise CourseError(
            "this client's token may not list or revoke tokens (it lacks the "
            f"'{MANAGE_TOKENS}' scope): do it on {api.url}/accounts/, or run "
            f"`course login {api.url} --manage-tokens` first"
        )
    try:
        items = response.json()
    except ValueError:
        items = None
    if not isinstance(items, list):
        raise CourseError("the server's token list is not a list")
    return items


def token_revoke(token_id: int) -> dict:
    """Log one client out by its token's id; forgets ours if it was ours."""
    listed = {item.get("id"): item for item in tokens()}
    if token_id not in listed:
        raise CourseError(
            f"you have no token with id {token_id}: `course tokens` lists them"
        )
    response = _api().call(
        "DELETE", f"/api/v1/auth/tokens/{token_id}/", expect=(204, 404)
    )
    if response.status_code == 404:  # revoked elsewhere meanwhile
        raise CourseError(f"you have no token with id {token_id} any more")
    token = listed[token_id]
    if token.get("current"):
        store.credentials_forget()
    return {"revoked": token}


def exercises() -> list[dict]:
    items = _api().json("GET", "/api/v1/exercises/")
    if not isinstance(items, list):
        raise CourseError("the server's exercise list is not a list")
    return items


def fetch(slug: str, api: Api | None = None) -> dict:
    """An exercise's prompt, starter and check options, and its local-check
    bundle (the visible cases and the server's values for them), saved for
    offline checks."""
    store.exercise_load(slug)  # refuses a malformed slug before any request
    api = api or _api()
    response = api.call("GET", f"/api/v1/exercises/{slug}/", expect=(200, 404))
    if response.status_code == 404:
        raise CourseError(f"no exercise named {slug!r}: `course exercises` lists them")
    exercise = response.json()
    store.exercise_save(exercise)
    local.fetch_bundle(api, exercise)
    try:
        store.diagnoses_save(api.json("GET", "/api/v1/diagnoses/"))
    except CourseError:
        pass  # hints are a nicety; the checks do not need them
    return exercise


def get(slug: str, *, output: str | None = None, force: bool = False) -> dict:
    """Fetch `slug` and write its starter (kept if the file exists, unless force)."""
    exercise = fetch(slug)
    path = Path(output or f"{slug.replace('-', '_')}.py")
    written = force or not path.exists()
    if written:
        try:
            path.write_text(exercise.get("starter") or "", encoding="utf-8")
        except OSError as exc:
            raise CourseError(f"{path}: cannot write: {exc.strerror}") from None
    return {"exercise": exercise, "file": str(path), "written": written}


def exercise_for_check(slug: str) -> dict:
    """The saved exercise, else fetched now (offline works once fetched).

    A copy saved before the server said its size limit, or without the
    local-check bundle the server offers now, is fetched again when the
    server answers, so the check can refuse what the server would.
    """
    saved = store.exercise_load(slug)
    logged_in = store.credentials_load() is not None
    if saved is not None:
        stale = "max_code_bytes" not in saved or not local.bundle_current(saved)
        if stale and logged_in:
            try:
                return fetch(slug)
            except CourseError:
                pass  # offline: check without the limit
        return saved
    if not logged_in:
        raise CourseError(
            f"{slug} was never fetched: run `course login URL`, "
            f"then `course get {slug}`"
        )
    return fetch(slug)


def check(slug: str, code: str) -> dict:
    exercise = exercise_for_check(slug)
    limit = exercise.get("max_code_bytes")
    if isinstance(limit, int) and not isinstance(limit, bool):
        # The server's limit and its words: check refuses what submit would.
        too_big = code_size_problem(code_size(code), limit)
        if too_big:
            raise CourseError(too_big)
    verdict = local.check(exercise, code)
    return {"exercise": slug, "local": True, "hidden_cases": "run on submit", **verdict}


def submit(
    slug: str,
    code: str,
    *,
    progress: Callable[[dict], None] | None = None,
    wait: float = WAIT_SECONDS,
    poll: float = 0.5,
) -> dict:
    """Submit, then follow the grade to its verdict (the submission's JSON)."""
    store.exercise_load(slug)  # a malformed slug is refused before the request
    api = _api()
    response = api.call(
        "POST",
        f"/api/v1/exercises/{slug}/submissions/",
        json={"code": code},
        expect=(202, 404),
    )
    if response.status_code == 404:
        raise CourseError(f"no exercise named {slug!r}: `course exercises` lists them")
    created = response.json()
    path = f"/api/v1/submissions/{created['id']}/"
    deadline = time.monotonic() + wait
    submission = {"id": created["id"], "status": created.get("status", "queued")}
    try:
        while True:
            submission = api.json("GET", path)
            if progress:
                progress(submission)
            if submission.get("status") in TERMINAL:
                return submission
            if time.monotonic() > deadline:
                raise CourseError(
                    f"still {submission.get('status')} after {wait:g} s; the grade "
                    f"goes on, see {submission.get('html_url') or api.url + path}"
                )
            time.sleep(poll)
    except KeyboardInterrupt:
        raise CourseError(
            "stopped waiting; your submission still counts: "
            f"{submission.get('html_url') or api.url + path}"
        ) from None
