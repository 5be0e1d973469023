"""The learner's side of the boundary: run a submission, write one result.

Nothing computed here is trusted. This module only executes the learner's
code, lets the exercise's `run_case` capture plain data, and writes it to the
result descriptor in the format of `grading_engine.harness.wire`. The verdict is
decided by the parent (grading_engine.grading).

A warm pool calls `preload()` once and then forks per job, so the ~2 s of
importing torch and building reference models is paid once, not per grade.
"""

from __future__ import annotations

import builtins
import json
import linecache
import os
import traceback

import torch

from grading_engine.harness.guard import sealed
from grading_engine.harness.inputs import run_watched
from grading_engine.harness.wire import VERSION, encode_result, tensor_key

SUBMISSION = "<submission>"  # filename of learner code in tracebacks
_MAX_MESSAGE = 2000
_MAX_FRAMES = 8


def preload(slugs: list[str] | None = None) -> None:
    """Import what a job needs and warm the reference models of `slugs`.

    None means every exercise module: whatever a harness builds in its
    `preload` is then paid once, before any job's clock starts, and a grade
    costs the same in every slot and in a cold sandbox warmed for its one
    harness (which is what an exercise's time budget is measured on).
    """
    import tiktoken  # noqa: F401

    from grading_engine.exercises.base import harness_slugs, load_harness

    for slug in harness_slugs() if slugs is None else slugs:
        try:
            module = load_harness(slug)
        except LookupError:
            continue  # an exercise not written yet must not stop the pool
        warm = getattr(module, "preload", None)
        if callable(warm):
            warm()


def execute_job(job: dict, result_fd: int) -> None:
    """Run `job` and write one result blob to `result_fd`; never raises."""
    try:
        try:
            meta, tensors = _run(job)
            blob = encode_result(meta, tensors)
        except BaseException as exc:  # noqa: BLE001 - must always report
            blob = encode_result(
                _meta(job_error=_error_from(exc, "the grader could not run")), {}
            )
        _write_all(result_fd, blob)
    except BaseException:  # noqa: BLE001, S110 - the parent reports it missing
        pass
    finally:
        try:
            os.close(result_fd)
        except OSError:
            pass


def _meta(*, job_error: dict | None = None, cases: list | None = None) -> dict:
    return {"version": VERSION, "error": job_error, "cases": cases or []}


def _run(job: dict) -> tuple[dict, dict]:
    from grading_engine.exercises.base import load_harness

    code, entry_point = job.get("code"), job.get("entry_point")
    if not isinstance(code, str) or not isinstance(entry_point, str):
        return _meta(job_error=_plain_error("BadJob", "job has no code")), {}
    cases = job.get("cases")
    if not isinstance(cases, list):
        return _meta(job_error=_plain_error("BadJob", "job has no cases")), {}
    if job.get("tiktoken_cache_dir"):
        # Set before the learner's code runs so `tiktoken.get_encoding("gpt2")`
        # finds the vocabulary files offline.
        os.environ["TIKTOKEN_CACHE_DIR"] = str(job["tiktoken_cache_dir"])
    if "OMP_NUM_THREADS" not in os.environ:
        torch.set_num_threads(1)
    # Import the harness before the learner's code runs, so an import error
    # here is reported as the grader's fault, not the learner's.
    module = load_harness(str(job.get("harness")))
    # While the learner's code runs, no `grading_engine` module can be imported or
    # looked up in sys.modules: the answers stay in the parent.
    with sealed():
        return _run_learner(module, code, entry_point, cases)


def _run_learner(module, code: str, entry_point: str, cases: list) -> tuple:
    try:
        compiled = compile(code, SUBMISSION, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return _meta(job_error=_syntax_error(exc)), {}
    except BaseException as exc:  # noqa: BLE001 - e.g. MemoryError, null bytes
        return _meta(job_error=_plain_error(type(exc).__name__, _safe_str(exc))), {}
    linecache.cache[SUBMISSION] = (len(code), None, code.splitlines(True), SUBMISSION)

    namespace = {"__name__": "__submission__", "__builtins__": builtins}
    try:
        exec(compiled, namespace)  # noqa: S102 - running it is the point
    except BaseException as exc:  # noqa: BLE001 - SystemExit too
        return _meta(job_error=_error_from(exc, "while defining your code")), {}

    fn = namespace.get(entry_point)
    if not callable(fn):
        message = f"define a function named {entry_point}"
        if entry_point in namespace:
            kind = type(fn).__name__
            message = f"{entry_point} is a {kind}, not a function: {message}"
        return _meta(job_error=_plain_error("MissingEntryPoint", message)), {}

    records, tensors = [], {}
    for index, case in enumerate(cases):
        record, case_tensors = _run_case(module, fn, index, case)
        records.append(record)
        tensors.update(case_tensors)
    return _meta(cases=records), tensors


def _run_case(module, fn, index: int, case: dict) -> tuple[dict, dict]:
    """Capture one case; any failure becomes that case's error record.

    The harness calls the learner's function through an InputWatch, so every
    exercise reports the tensors it was given and changed in place.
    """
    try:
        data, captured = run_watched(module, fn, case)
        if not isinstance(data, dict) or not isinstance(captured, dict):
            raise TypeError("run_case must return (dict, dict)")
        json.dumps(data, allow_nan=True)  # fail here, not while packing all
        tensors = {}
        for name, value in captured.items():
            if not isinstance(value, torch.Tensor):
                raise TypeError(f"captured {name!r} is not a tensor")
            tensors[tensor_key(index, name)] = value
        return {"ok": True, "data": data}, tensors
    except BaseException as exc:  # noqa: BLE001 - SystemExit, KeyboardInterrupt
        return {"ok": False, "error": _error_from(exc, "while running a case")}, {}


def _plain_error(kind: str, message: str, line: int | None = None) -> dict:
    return {
        "type": kind,
        "message": message[:_MAX_MESSAGE],
        "line": line,
        "traceback": "",
    }


def _syntax_error(exc: SyntaxError) -> dict:
    try:
        text = "".join(traceback.format_exception_only(type(exc), exc))
    except Exception:  # noqa: BLE001
        text = ""
    line = exc.lineno if isinstance(exc.lineno, int) and exc.lineno >= 0 else None
    error = _plain_error(type(exc).__name__, _safe_str(exc.msg), line)
    error["traceback"] = text[:_MAX_MESSAGE]
    return error


def _error_from(exc: BaseException, context: str) -> dict:
    """Describe an exception by its submission frames only."""
    kind = _safe_str(getattr(type(exc), "__name__", "Exception"))
    message = _safe_str(exc)
    if isinstance(exc, SystemExit):
        message = f"your code called exit() {context} (code {message or 0})"
    try:
        frames = [
            frame
            for frame in traceback.extract_tb(exc.__traceback__)
            if frame.filename == SUBMISSION
        ][-_MAX_FRAMES:]
    except BaseException:  # noqa: BLE001
        frames = []
    line = frames[-1].lineno if frames else None
    lines = []
    for frame in frames:
        lines.append(f"  line {frame.lineno}, in {frame.name}\n")
        if frame.line:
            lines.append(f"    {frame.line.strip()}\n")
    if lines:  # the bare "kind: message" line alone would repeat the message
        lines.append(f"{kind}: {message}" if message else kind)
    error = _plain_error(kind, message, line)
    error["traceback"] = "".join(lines)[-_MAX_MESSAGE:]
    return error


def _safe_str(value) -> str:
    # str() of a learner's exception can itself raise or be enormous.
    try:
        text = str(value)
    except BaseException:  # noqa: BLE001
        text = f"<unprintable {type(value).__name__}>"
    if not isinstance(text, str):
        text = "<unprintable>"
    return text[:_MAX_MESSAGE]


def _write_all(fd: int, blob: bytes) -> None:
    view = memoryview(blob)
    while view:
        written = os.write(fd, view)
        view = view[written:]
