"""Grade one submission: run it through a Runner, then judge in the parent.

The child only captures plain data; this module decodes it with strict caps
and lets the exercise's `check_case` compare it with the reference here, in
the trusted process. Whatever the learner prints, forges or crashes with,
the status is "passed" only when every check of every case passed.
"""

from __future__ import annotations

import secrets
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from grading_engine import authored
from grading_engine.checks.result import CheckResult
from grading_engine.checks.slip_rules import contradicted, ruling_out
from grading_engine.exercises.base import load_harness
from grading_engine.expected import Shipped, one_check, shipped
from grading_engine.runner import (
    BUSY_LIMIT,
    CPU_LIMIT,
    CancelToken,
    ChildOutcome,
    Runner,
    Slow,
)

MAX_RESULT_BYTES = 64 * 1024 * 1024
TOLERANCE_OPTIONS = ("rtol", "atol")
_OVERRIDE_LOCK = threading.Lock()


@dataclass
class Verdict:
    status: str  # "passed" | "failed" | "error" | "cancelled"
    score: float  # 0..1, passed checks / all checks (0 for error)
    checks: list[CheckResult] = field(default_factory=list)
    stdout: str = ""
    stderr: str = ""
    duration_ms: float = 0.0
    # CPU time of the job where the runner measures it (not in to_dict: the
    # `grade --json` shape is a contract).
    cpu_ms: float | None = None

    def to_dict(self) -> dict:
        return {
            "status": self.status,
            "score": self.score,
            "checks": [check.to_dict() for check in self.checks],
            "stdout": self.stdout,
            "stderr": self.stderr,
            "duration_ms": self.duration_ms,
        }


def grade(
    *,
    harness: str,
    code: str,
    entry_point: str,
    runner: Runner,
    seed: int | None = None,
    timeout: float = 60.0,
    tiktoken_cache_dir: str | None = None,
    options: dict | None = None,
    budget: str | None = None,
    cancel: CancelToken | None = None,
    slow: Slow | None = None,
    visible_only: bool = False,
    cases: list[dict] | None = None,
    expected: Shipped | None = None,
    declaration: authored.Declaration | None = None,
) -> Verdict:
    """Run `code` against the cases of `harness` and judge the result.

    `options` are an exercise's admin-set overrides; `rtol`/`atol` replace
    the harness's RTOL/ATOL while its checks run (see `tolerances`).
    `timeout` is the job's time budget and `budget` says where it comes
    from, for the message when a job exceeds it. Setting `cancel` stops the
    job; the verdict is then "cancelled". `slow` says when the job runs
    longer than expected (grading_engine.runner.Slow). `visible_only` runs
    the visible cases alone: the learner's local check (`course check`),
    which passes the server's `cases` (its visible ones) and the values its
    expectations computed for them (`expected`: grading_engine.expected),
    since the learner edition of the engine draws no cases and computes no
    reference. `declaration` grades an authored exercise (harness
    "authored", grading_engine.authored): its cases come from it, and its
    reference and known mistakes run as jobs of their own on `runner`.
    """
    module = load_harness(harness)
    if cases is None:
        if seed is None:
            seed = secrets.randbits(31)  # a fresh draw per attempt
        if declaration is not None:
            cases = declaration.draw_cases(seed)
        else:
            cases = module.make_cases(seed)
    if visible_only:
        # Visible cases do not depend on the seed (a test holds every
        # exercise to that), so the learner's local check runs exactly the
        # visible cases the server runs, without knowing its seed.
        cases = [case for case in cases if not case.get("hidden")]
    if tiktoken_cache_dir is None:
        from grading_engine.reference.tokenizer import default_cache_dir, get_encoding

        get_encoding()  # installs the GPT-2 files there once per process
        tiktoken_cache_dir = str(default_cache_dir())
    job = {
        "code": code,
        "entry_point": entry_point,
        "harness": harness,
        "cases": cases,
        "tiktoken_cache_dir": str(tiktoken_cache_dir),
    }
    extra = {
        name: value
        for name, value in (("cancel", cancel), ("slow", slow))
        if value is not None
    }
    outcome = runner.run(job, timeout=timeout, **extra)
    if declaration is not None:
        module = authored.harness_for(
            declaration,
            cases,
            lambda more: runner.run({**job, **more}, timeout=timeout, **extra),
        )
        if expected is None and (broken := _authored_broken(module, outcome)):
            return broken
    with tolerances(module, options), shipped(expected):
        verdict = judge(module, cases, outcome, timeout=timeout, budget=budget)
    verdict.cpu_ms = outcome.cpu_ms
    return verdict


def _authored_broken(module, outcome: ChildOutcome) -> Verdict | None:
    """An error verdict when an authored exercise's reference gives no
    answer for some case (the exercise's fault: said before judging)."""
    if outcome.cancelled:
        return None
    try:
        module.jobs.prepare()
    except authored.AuthoredError as exc:
        check = CheckResult("exercise", False, f"this exercise cannot grade: {exc}")
        return Verdict("error", 0.0, [check], "", "", outcome.duration_ms)
    return None


@contextmanager
def tolerances(module, options: dict | None) -> Iterator[None]:
    """Use an exercise's rtol/atol in place of its harness's RTOL/ATOL.

    Harness checks read the module constants at call time, so swapping them
    for the duration of one judge is enough; the lock keeps two threads of
    one process from judging with each other's tolerances.
    """
    wanted = {
        key.upper(): float(value)
        for key, value in (options or {}).items()
        if key in TOLERANCE_OPTIONS and hasattr(module, key.upper())
    }
    if not wanted:
        yield
        return
    with _OVERRIDE_LOCK:
        saved = {name: getattr(module, name) for name in wanted}
        try:
            for name, value in wanted.items():
                setattr(module, name, value)
            yield
        finally:
            for name, value in saved.items():
                setattr(module, name, value)


def time_limit_message(
    outcome: ChildOutcome, timeout: float, budget: str | None
) -> str:
    """Which limit stopped the job, and what to look for."""
    which = f", this exercise's time budget ({budget})," if budget else ""
    if outcome.killed_reason == CPU_LIMIT:
        return (
            f"used more than {timeout:g} s of CPU time{which} and was stopped: "
            "look for a loop that never ends or work that grows with the input"
        )
    if outcome.killed_reason == BUSY_LIMIT and outcome.cpu_ms is not None:
        return (
            f"was still computing after {outcome.duration_ms / 1000:.0f} s of "
            "wall-clock time on a busy machine, having used "
            f"{outcome.cpu_ms / 1000:.1f} s of the {timeout:g} s of CPU time it may "
            f"use{which} and was stopped: look for a loop that never ends or "
            "work that grows with the input"
        )
    if outcome.cpu_ms is not None:  # the backstop of a CPU-time budget
        return (
            f"ran for {outcome.duration_ms / 1000:.0f} s of wall-clock time without "
            f"finishing, having used {outcome.cpu_ms / 1000:.1f} s of the "
            f"{timeout:g} s of CPU time it may use{which} and was stopped at the "
            "limit for code that waits: look for a sleep, an input() or a wait "
            "on something that never comes"
        )
    return (
        f"took longer than {timeout:g} s{which} and was stopped: look for a "
        "loop that never ends or work that grows with the input"
    )


def judge(
    module,
    cases: list[dict],
    outcome: ChildOutcome,
    *,
    timeout: float,
    budget: str | None = None,
):
    """Turn a child's raw outcome into a Verdict; trusts nothing in it."""
    # torch comes in with the first verdict, not with this module: the web
    # processes import it (Verdict, grade) and never judge.
    from grading_engine.harness.wire import WireError, decode_result

    def error(name: str, message: str, **extra) -> Verdict:
        check = CheckResult(name=name, passed=False, message=message, **extra)
        return Verdict(
            "error", 0.0, [check], outcome.stdout, outcome.stderr, outcome.duration_ms
        )

    if outcome.cancelled:
        check = CheckResult("cancelled", False, "cancelled before its grade finished")
        return Verdict("cancelled", 0.0, [check], "", "", outcome.duration_ms)
    if outcome.timed_out or outcome.killed_reason == CPU_LIMIT:
        return error("time limit", time_limit_message(outcome, timeout, budget))
    if not outcome.result:
        return error("run", _crash_message(outcome))
    try:
        meta, tensors = decode_result(outcome.result, max_bytes=MAX_RESULT_BYTES)
    except WireError as exc:
        return error(
            "result",
            f"the grader could not read the result of your code ({exc}); this "
            "happens when the code writes to the grader's channel or ends the "
            "process early",
        )
    if meta["error"] is not None:
        return error(_error_name(meta["error"]), _describe(meta["error"]))
    if len(meta["cases"]) != len(cases):
        return error(
            "result",
            f"the grader expected {len(cases)} case results and got "
            f"{len(meta['cases'])}",
        )

    runs: list[tuple[dict, dict, dict]] = []
    for index, (case, record) in enumerate(zip(cases, meta["cases"], strict=True)):
        if not record["ok"]:
            where = "a hidden case" if case.get("hidden") else f"case {case['name']}"
            return error(
                _error_name(record["error"]),
                f"{_describe(record['error'])} (in {where})",
                hidden=bool(case.get("hidden")),
            )
        prefix = f"c{index}/"
        case_tensors = {
            name[len(prefix) :]: t
            for name, t in tensors.items()
            if name.startswith(prefix)
        }
        runs.append((case, record["data"], case_tensors))

    checks = judge_cases(module, runs)
    passed = sum(check.passed for check in checks)
    all_passed = bool(checks) and passed == len(checks)
    return Verdict(
        "passed" if all_passed else "failed",
        passed / len(checks) if checks else 0.0,
        checks,
        outcome.stdout,
        outcome.stderr,
        outcome.duration_ms,
    )


def judge_cases(
    module, runs: list[tuple[dict, dict, dict]], *, every_case_agrees: bool = True
) -> list[CheckResult]:
    """Every case's checks, naming only the slips every case agrees with
    (checks.slip_rules): a slip some case contradicts is ruled out and the
    cases are judged again, until what is named holds everywhere.
    `every_case_agrees=False` names per case, as before that rule (for the
    benchmark that states its cost)."""
    checks = [check for run in runs for check in _check(module, *run)]
    agrees = getattr(module.check_case, "slip_agrees", None)
    if not every_case_agrees:
        agrees = None
    ruled: set[str] = set()
    if agrees is not None and any(not c.passed for c in checks):
        if ruled := _listed_and_contradicted(module, agrees, runs):
            with ruling_out(ruled):
                checks = [check for run in runs for check in _check(module, *run)]
    while agrees is not None:
        named = {c.diagnosis for c in checks if c.diagnosis and not c.passed}
        if not (more := contradicted(agrees, runs, named - ruled)):
            break
        ruled |= more
        with ruling_out(ruled):
            checks = [check for run in runs for check in _check(module, *run)]
    return checks


def _listed_and_contradicted(module, agrees, runs) -> set[str]:
    """Every slip a cheap judge lists that some case contradicts, named or
    not: two slips that give the same value on one case (so neither is
    named there) can be told apart by another case. Only judges whose slips
    are plain values list them (`slip_candidates`)."""
    candidates = getattr(module.check_case, "slip_candidates", None)
    if candidates is None:
        return set()
    listed = set()
    for case, _, _ in runs:
        try:
            listed |= candidates(case)
        except Exception:  # noqa: BLE001, S112 - malformed cases judge as before
            continue
    return contradicted(agrees, runs, listed) if listed else set()


def _check(module, case: dict, data: dict, tensors: dict) -> list[CheckResult]:
    """The harness's checks of one case, then the judges every exercise shares."""
    # Malformed data (a tampered harness, a learner object that captured
    # oddly) must fail the case, not crash the grader.
    try:
        with one_check():
            results = module.check_case(case, data, tensors)
    except Exception as exc:  # noqa: BLE001
        return [
            CheckResult(
                name=f"{case['name']}",
                passed=False,
                message=f"the grader could not read the result of this case "
                f"({type(exc).__name__}: {str(exc)[:200]})",
                hidden=bool(case.get("hidden")),
            )
        ]
    if not results or not all(isinstance(r, CheckResult) for r in results):
        raise TypeError(f"{module.__name__}.check_case returned no CheckResults")
    from grading_engine.checks.in_place import shared_checks

    return [*results, *shared_checks(module, case, data, results)]


def _error_name(error: dict) -> str:
    return {
        "SyntaxError": "syntax",
        "IndentationError": "syntax",
        "TabError": "syntax",
        "MissingEntryPoint": "entry point",
    }.get(error["type"], "exception")


def _describe(error: dict) -> str:
    """`line 4: AttributeError: ...`, or the plain message when no line."""
    kind, message, line = error["type"], error["message"], error["line"]
    if kind == "MissingEntryPoint":
        return message
    if kind in ("SyntaxError", "IndentationError", "TabError"):
        text = message
    else:
        text = f"{kind}: {message}" if message else kind
    if line is not None:
        text = f"line {line}: {text}"
    if error["traceback"]:
        text += "\n\n" + error["traceback"]
    return text


def _crash_message(outcome: ChildOutcome) -> str:
    code = outcome.exit_code
    if outcome.killed_reason:
        reason = f"killed: {outcome.killed_reason}"
    elif code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        reason = f"the process was killed by {name}"
        if -code == signal.SIGKILL:
            reason += " (often: it ran out of memory)"
    elif code == 0:
        reason = (
            "the process ended before the grader got a result: do not call "
            "exit(), sys.exit() or os._exit() in your code"
        )
    else:
        reason = f"the process exited with code {code} before sending a result"
    tail = outcome.stderr.strip().splitlines()[-3:]
    if tail and not outcome.killed_reason:
        reason += "\n\n" + "\n".join(tail)
    return reason
