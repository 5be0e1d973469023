"""`course`: log in, list, fetch, check locally and submit GPT-2 course exercises.

Exit codes: 0 passed (or the command did its job), 1 the code did not pass
(failed, error or cancelled verdict), 2 the command could not do its job
(usage, network, file, refusal). Every command takes --json.
"""

from __future__ import annotations

import argparse
import getpass
import itertools
import json
import sys

from course import __version__, actions, render, store
from course.api import server_url
from course.errors import CourseError

EXIT_PASSED, EXIT_FAILED, EXIT_ERROR = 0, 1, 2


class UsageError(CourseError):
    """A command line argparse cannot take (exit code 2, as argparse's)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        raise UsageError(f"{message} (see `{self.prog} --help`)")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="course",
        description="Check GPT-2 course exercises locally and submit them.",
        epilog="Exit codes: 0 passed, 1 failed, 2 error or usage.",
    )
    parser.add_argument("--version", action="version", version=f"course {__version__}")
    parser.add_argument("--json", action="store_true", help="print JSON")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def command(name: str, help: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help, description=help)
        p.add_argument(
            "--json", action="store_true", default=argparse.SUPPRESS, help="print JSON"
        )
        return p

    p = command("login", "log in to a course server and keep an API token")
    p.add_argument("url", help="the server, e.g. https://course.example.org")
    p.add_argument("--username", help="asked for when not given")
    p.add_argument(
        "--password-stdin", action="store_true", help="read the password from stdin"
    )
    p.add_argument(
        "--name",
        default="",
        help="what to call this client's token (default: course on HOSTNAME)",
    )
    p.add_argument(
        "--manage-tokens",
        action="store_true",
        help="let this client's token also list and revoke your tokens "
        "(`course tokens`); without it the token does a learner's work only",
    )
    command("logout", "revoke and forget this client's token (others stay)")
    p = command("tokens", "list your tokens, one per logged-in client")
    actions_ = p.add_subparsers(dest="action", metavar="ACTION")
    revoke = actions_.add_parser(
        "revoke",
        help="revoke a token by its id (logs that client out)",
        description="Revoke a token by its id (logs that client out).",
    )
    revoke.add_argument("id", type=int, help="the id `course tokens` shows")
    revoke.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print JSON"
    )
    command("exercises", "list exercises with your status")
    p = command("get", "write an exercise's starter file and print its prompt")
    p.add_argument("slug")
    p.add_argument("-o", "--output", help="file to write (default: SLUG.py)")
    p.add_argument("--force", action="store_true", help="overwrite an existing file")
    p = command("check", "run the visible cases locally, as the server would")
    p.add_argument("slug")
    p.add_argument("file")
    p = command("submit", "submit for grading and wait for the verdict")
    p.add_argument("slug")
    p.add_argument("file")
    p.add_argument(
        "--wait",
        type=float,
        default=actions.WAIT_SECONDS,
        help="give up waiting after this many seconds (the grade goes on)",
    )
    return parser


def _out(args, data, text: str) -> None:
    print(json.dumps(data, indent=1, default=str) if args.json else text)


def _ask(prompt: str) -> str:
    # The prompt goes to stderr: stdout stays clean for --json.
    sys.stderr.write(prompt)
    sys.stderr.flush()
    line = sys.stdin.readline()
    if not line:
        raise CourseError("no username given (stdin is closed)")
    return line.rstrip("\r\n")


def _password(args) -> str:
    if args.password_stdin or not sys.stdin.isatty():
        return sys.stdin.readline().rstrip("\r\n")
    try:
        return getpass.getpass("Password: ")
    except EOFError:
        raise CourseError("no password given") from None


def cmd_login(args) -> int:
    server_url(args.url)  # a malformed URL is refused before any question
    username = args.username
    if not username:
        if args.password_stdin:
            raise CourseError("--password-stdin needs --username")
        username = _ask("Username: ").strip()
    result = actions.login(
        args.url,
        username,
        _password(args),
        name=args.name,
        manage_tokens=args.manage_tokens,
    )
    scopes = ", ".join(str(scope) for scope in result["scopes"] or [])
    _out(
        args,
        result,
        f"Logged in to {result['url']} as {username}; the token "
        f'"{result["name"]}" ({scopes}) is saved in {result["credentials"]} '
        f"(expires {result['expires_at']}).",
    )
    return EXIT_PASSED


def cmd_logout(args) -> int:
    result = actions.logout()
    if not result["logged_out"]:
        text = "Not logged in."
    elif result["revoked"]:
        text = (
            "Logged out: this client's token is revoked and forgotten "
            "(your other clients stay logged in)."
        )
    else:
        text = (
            "Logged out here; the server was unreachable, "
            "so the token expires on its own."
        )
    _out(args, result, text)
    return EXIT_PASSED


def cmd_tokens(args) -> int:
    if args.action == "revoke":
        token = actions.token_revoke(args.id)["revoked"]
        text = f'Revoked token {token["id"]} "{token.get("name")}".'
        if token.get("current"):
            text += " It was this client's: log in again to use the server."
        _out(args, token, text)
        return EXIT_PASSED
    items = actions.tokens()
    rows = [("ID", "NAME", "STARTS", "CREATED", "LAST USED", "")]
    rows += [
        (
            str(t.get("id")),
            str(t.get("name")),
            f"{t.get('prefix')}...",
            str(t.get("created_at") or "")[:16].replace("T", " "),
            str(t.get("last_used_at") or "never")[:16].replace("T", " "),
            "(this client)" if t.get("current") else "",
        )
        for t in items
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False))
        + (f"  {row[5]}" if row[5] else "")
        for row in rows
    ]
    lines.append("Revoke one: course tokens revoke ID")
    _out(args, items, "\n".join(line.rstrip() for line in lines))
    return EXIT_PASSED


def cmd_exercises(args) -> int:
    items = actions.exercises()
    width = max((len(i.get("slug", "")) for i in items), default=4)
    lines = [f"{'SLUG':<{width}}  {'STATUS':<11}  TITLE"]
    lines += [
        f"{i.get('slug', ''):<{width}}  {i.get('status', ''):<11}  {i.get('title', '')}"
        for i in items
    ]
    passed = sum(1 for i in items if i.get("status") == "passed")
    lines.append(f"{passed} of {len(items)} passed")
    _out(args, items, "\n".join(lines))
    return EXIT_PASSED


def cmd_get(args) -> int:
    result = actions.get(args.slug, output=args.output, force=args.force)
    exercise = result["exercise"]
    note = (
        f"Wrote the starter to {result['file']}."
        if result["written"]
        else f"Kept your existing {result['file']} (--force overwrites it)."
    )
    text = (
        f"{exercise.get('title')} ({exercise['slug']})\n"
        f"Signature: {exercise.get('signature')}\n\n"
        f"{exercise.get('prompt', '').strip()}\n\n"
        f"{note}\nCheck it: course check {exercise['slug']} {result['file']}"
    )
    data = {
        key: exercise.get(key)
        for key in ("slug", "title", "signature", "entry_point", "prompt", "html_url")
    }
    _out(args, {**data, "file": result["file"], "written": result["written"]}, text)
    return EXIT_PASSED


def _exit_for(verdict: dict) -> int:
    return EXIT_PASSED if verdict.get("status") == "passed" else EXIT_FAILED


def cmd_check(args) -> int:
    code = actions.read_code(args.file)
    if not args.json and sys.stderr.isatty():
        print(f"Checking {args.slug} locally...", file=sys.stderr)
    verdict = actions.check(args.slug, code)
    text = render.text(
        verdict, slug=args.slug, diagnoses=store.diagnoses_load(), local=True
    )
    text += (
        "\nOnly the visible cases ran here. Hidden cases run on the server when "
        f"you submit: course submit {args.slug} {args.file}"
    )
    _out(args, verdict, text)
    return _exit_for(verdict)


class _Progress:
    """Queue position, status and a spinner on stderr while a grade runs."""

    def __init__(self, *, quiet: bool):
        self.quiet = quiet
        self.tty = sys.stderr.isatty()
        self.spin = itertools.cycle("|/-\\")
        self.last = None

    def __call__(self, submission: dict) -> None:
        if self.quiet:
            return
        status = submission.get("status")
        position = submission.get("queue_position")
        elapsed = (submission.get("timings") or {}).get("elapsed_ms")
        line = status or ""
        if status == "queued":
            waiting = submission.get("waiting_for") or "a free grader"
            line = f"queued, position {position or 1} among yours, for {waiting}"
        elif status == "running":
            line = "running"
        if self.tty and status in ("queued", "running"):
            seconds = f" {elapsed / 1000:.1f} s" if elapsed is not None else ""
            sys.stderr.write(f"\r{next(self.spin)} {line}{seconds}\x1b[K")
            sys.stderr.flush()
        elif line != self.last and status in ("queued", "running"):
            print(line, file=sys.stderr)
        self.last = line

    def done(self) -> None:
        if self.tty and not self.quiet:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def cmd_submit(args) -> int:
    code = actions.read_code(args.file)
    progress = _Progress(quiet=args.json)
    try:
        submission = actions.submit(args.slug, code, progress=progress, wait=args.wait)
    finally:
        progress.done()
    text = render.text(
        submission, slug=args.slug, diagnoses=store.diagnoses_load(), local=False
    )
    if submission.get("html_url"):
        text += f"\nReview: {submission['html_url']}"
    _out(args, submission, text)
    return _exit_for(submission)


COMMANDS = {
    "login": cmd_login,
    "logout": cmd_logout,
    "tokens": cmd_tokens,
    "exercises": cmd_exercises,
    "get": cmd_get,
    "check": cmd_check,
    "submit": cmd_submit,
}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = _parser().parse_args(argv)
    except UsageError as exc:
        if "--json" in argv:
            print(json.dumps({"error": str(exc)}))
        print(f"course: {exc}", file=sys.stderr)
        return exc.exit_code
    try:
        return COMMANDS[args.command](args)
    except CourseError as exc:
        if args.json:
            print(json.dumps({"error": str(exc)}))
        print(f"course: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("course: interrupted", file=sys.stderr)
        return EXIT_ERROR
