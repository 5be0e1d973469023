"""What the server computes for a case and ships to a learner's local check.

A harness's `check_case` compares what the learner's code gave with what the
reference gives for the same case, and names a mistake by recomputing the
case the way known mistakes would. Both are answers, and neither may reach a
learner's machine. So every such computation lives in a function of the case
alone marked `@expectation`:

* On the server it runs as written, when `check_case` calls it.
* For `course check`, the server computes every expectation of every VISIBLE
  case once (`compute`; visible cases are the same for every seed and their
  expected values are shown in failure feedback anyway) and ships the values
  as data with the exercise (`encode`; JSON, and tensors as safetensors).
* The learner edition of the engine (grading_engine.learner_edition) has the
  bodies of these functions cut out, with everything only they used. There,
  `check_case` runs unchanged inside `shipped(bundle)`, and each expectation
  returns the server's value for that case: the same checks, messages and
  diagnoses as the server's, without the code that computes the answers.

An expectation takes the case (and, with `keys=`, one key from a list the
case determines) and returns plain data: None, bool, int, float, str,
tensors, and lists, tuples and dicts of them. `when=` says which cases it
applies to (a computation only the small cases need is not shipped for GPT-2
small). It must not read a harness's tolerances (RTOL, ATOL): an exercise's
own tolerances replace them at judge time, after the values were shipped.
"""

from __future__ import annotations

import contextvars
import functools
import json
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager

FORMAT = 1
_LEN_BYTES = 8
# A bundle comes from the course server, over its API; still parsed with caps
# and never unpickled. The largest today (gpt2-forward) is a few MB.
MAX_BUNDLE_BYTES = 256 * 1024 * 1024
MAX_HEADER_BYTES = 32 * 1024 * 1024

_active: contextvars.ContextVar[Shipped | None] = contextvars.ContextVar(
    "grading_engine_shipped", default=None
)
# Within one case's check (grading.grade around check_case): what each
# expectation or `per_case` helper computed for that case, so the checks
# share one computation as they did before the expectations were split out.
_check_memo: contextvars.ContextVar[dict | None] = contextvars.ContextVar(
    "grading_engine_check_memo", default=None
)


@contextmanager
def one_check() -> Iterator[None]:
    """Compute each expectation and `per_case` helper once per case inside."""
    token = _check_memo.set({})
    try:
        yield
    finally:
        _check_memo.reset(token)


def _memoized(owner, fn: Callable, case, key: tuple):
    memo = _check_memo.get()
    if memo is None:
        return fn(case, *key)
    slot = (owner, id(case), key)
    if slot not in memo:
        memo[slot] = (case, fn(case, *key))  # the case kept: its id stays its
    return memo[slot][1]


def per_case(fn: Callable) -> Callable:
    """A helper of the checks (a case's inputs, say) computed once per case
    within one_check(); outside it (the child's run_case), every call anew."""

    @functools.wraps(fn)
    def wrapper(case, *key):
        return _memoized(wrapper, fn, case, key)

    return wrapper


class NotShipped(LookupError):
    """The learner edition needed a value the server did not ship."""


def expectation(
    fn: Callable | None = None,
    *,
    keys: Callable[[dict], list] | None = None,
    when: Callable[[dict], bool] | None = None,
):
    """Mark `fn(case)` (or `fn(case, key)` with `keys`) as computed by the server.

    `keys(case)` lists the keys (str or int) a case ships values for;
    `when(case)` says whether the case ships a value at all.
    """

    def mark(fn: Callable) -> Callable:
        name = f"{fn.__module__}.{fn.__qualname__}"

        @functools.wraps(fn)
        def wrapper(case: dict, *key):
            shipped_now = _active.get()
            if shipped_now is not None:
                return shipped_now.value(case, name, key)
            return _memoized(name, fn, case, key)

        wrapper.expectation_name = name
        wrapper.expectation_keys = keys
        wrapper.expectation_when = when
        return wrapper

    return mark(fn) if fn is not None else mark


def is_expectation(value) -> bool:
    return callable(value) and isinstance(getattr(value, "expectation_name", None), str)


def expectations_of(module) -> list[Callable]:
    """Every expectation a harness module holds (its own and those it imported)."""
    found = {
        value.expectation_name: value
        for value in vars(module).values()
        if is_expectation(value)
    }
    return [found[name] for name in sorted(found)]


@contextmanager
def shipped(bundle: Shipped | None) -> Iterator[None]:
    """Expectations read `bundle` instead of computing (None: they compute)."""
    if bundle is None:
        yield
        return
    token = _active.set(bundle)
    try:
        yield
    finally:
        _active.reset(token)


class Shipped:
    """The server's values for the visible cases of one harness."""

    def __init__(
        self,
        *,
        harness: str,
        engine: str,
        cases: list,
        expected: dict,
        declaration: dict | None = None,
    ):
        self.harness = harness
        self.engine = engine
        self.cases = cases
        self.expected = expected  # {case name: {expectation: encoded value}}
        # An authored exercise's public declaration (grading_engine.authored):
        # what its checks compare, for the visible cases only.
        self.declaration = declaration
        self._tensors: dict = {}

    def value(self, case: dict, name: str, key: tuple):
        case_name = case.get("name") if isinstance(case, dict) else None
        entry = self.expected.get(case_name, {}).get(name)
        where = f"{name} of case {case_name!r}"
        if entry is None:
            raise NotShipped(f"the server shipped no {where}")
        if key:
            entry = {k: item for k, item in entry["$keys"]}.get(key[0])
            if entry is None:
                raise NotShipped(f"the server shipped no {where} for {key[0]!r}")
        if "$raises" in entry:
            kind, message = entry["$raises"]
            raise type(kind, (Exception,), {})(message)
        return _decode(entry["value"], self._tensors)


# -- the server's side: computing a bundle -------------------------------------


def compute(module, cases: list[dict]) -> dict:
    """{case name: {expectation: {"value": v} | {"$raises": ...}}} for `cases`,
    values still Python objects (encode() turns them into bytes)."""
    names = [case["name"] for case in cases]
    if len(set(names)) != len(names):
        raise ValueError(f"{module.__name__}: two visible cases share a name")
    expected: dict = {}
    for case in cases:
        entries = {}
        for fn in expectations_of(module):
            if fn.expectation_when is not None and not fn.expectation_when(case):
                continue
            if fn.expectation_keys is None:
                entries[fn.expectation_name] = _outcome(fn.__wrapped__, case)
            else:
                entries[fn.expectation_name] = {
                    "$keys": [
                        [key, _outcome(fn.__wrapped__, case, key)]
                        for key in fn.expectation_keys(case)
                    ]
                }
        expected[case["name"]] = entries
    return expected


def _outcome(fn: Callable, *args) -> dict:
    try:
        return {"value": fn(*args)}
    except Exception as exc:  # noqa: BLE001 - shipped: the client raises it too
        return {"$raises": [type(exc).__name__, str(exc)]}


# -- bytes: a JSON header, then a safetensors payload --------------------------


def encode(
    *,
    harness: str,
    engine: str,
    cases: list,
    expected: dict,
    declaration: dict | None = None,
) -> bytes:
    """One bundle as bytes: 8-byte header length, JSON header, safetensors."""
    from safetensors.torch import save as st_save

    tensors: dict = {}
    header = {
        "format": FORMAT,
        "harness": harness,
        "engine": engine,
        "cases": cases,
        "expected": {
            case: {
                name: _encode_entry(entry, tensors) for name, entry in entries.items()
            }
            for case, entries in expected.items()
        },
    }
    if declaration is not None:
        header["declaration"] = declaration
    raw = json.dumps(header, allow_nan=True).encode("utf-8")  # keeps dict order
    return len(raw).to_bytes(_LEN_BYTES, "little") + raw + st_save(tensors)


def _encode_entry(entry: dict, tensors: dict) -> dict:
    if "$keys" in entry:
        return {
            "$keys": [
                [key, _encode_entry(item, tensors)] for key, item in entry["$keys"]
            ]
        }
    if "$raises" in entry:
        return entry
    return {"value": _encode(entry["value"], tensors)}


def _encode(value, tensors: dict):
    import torch

    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return {"$int": str(value)} if abs(value) >= 2**53 else value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"$float": repr(value)}
    if isinstance(value, torch.Tensor):
        key = f"t{len(tensors)}"
        plain = value.detach()
        if type(plain) is not torch.Tensor:
            plain = plain.as_subclass(torch.Tensor)
        tensors[key] = plain.to("cpu").contiguous().clone()
        return {"$tensor": key}
    if isinstance(value, torch.dtype):
        return {"$dtype": str(value).removeprefix("torch.")}
    if isinstance(value, tuple):
        return {"$tuple": [_encode(item, tensors) for item in value]}
    if isinstance(value, list):
        return [_encode(item, tensors) for item in value]
    if isinstance(value, dict):
        if all(isinstance(k, str) and not k.startswith("$") for k in value):
            return {k: _encode(v, tensors) for k, v in value.items()}
        return {
            "$dict": [
                [_encode(k, tensors), _encode(v, tensors)] for k, v in value.items()
            ]
        }
    raise TypeError(f"an expectation returned a {type(value).__name__}: not data")


def decode(blob: bytes) -> Shipped:
    """The bundle `encode` made; ValueError for anything else."""
    from safetensors.torch import load as st_load

    if not isinstance(blob, bytes | bytearray) or len(blob) < _LEN_BYTES:
        raise ValueError("not a local-check bundle (too short)")
    if len(blob) > MAX_BUNDLE_BYTES:
        raise ValueError("the local-check bundle is over its size cap")
    size = int.from_bytes(blob[:_LEN_BYTES], "little")
    if size > MAX_HEADER_BYTES or size > len(blob) - _LEN_BYTES:
        raise ValueError("not a local-check bundle (its header is cut short)")
    try:
        header = json.loads(blob[_LEN_BYTES : _LEN_BYTES + size].decode("utf-8"))
        tensors = st_load(bytes(blob[_LEN_BYTES + size :]))
    except Exception as exc:  # noqa: BLE001 - json, UTF-8 or safetensors
        raise ValueError(f"not a local-check bundle ({type(exc).__name__})") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ValueError("a local-check bundle of another format")
    if not isinstance(header.get("cases"), list) or not isinstance(
        header.get("expected"), dict
    ):
        raise ValueError("a local-check bundle without cases")
    bundle = Shipped(
        harness=str(header.get("harness")),
        engine=str(header.get("engine")),
        cases=header["cases"],
        expected=header["expected"],
        declaration=header.get("declaration"),
    )
    bundle._tensors = tensors
    return bundle


def _decode(value, tensors: dict):
    if isinstance(value, list):
        return [_decode(item, tensors) for item in value]
    if not isinstance(value, dict):
        return value
    if "$tensor" in value:
        return tensors[value["$tensor"]].clone()
    if "$int" in value:
        return int(value["$int"])
    if "$float" in value:
        return float(value["$float"])
    if "$dtype" in value:
        import torch

        return getattr(torch, value["$dtype"])
    if "$tuple" in value:
        return tuple(_decode(item, tensors) for item in value["$tuple"])
    if "$dict" in value:
        return {_decode(k, tensors): _decode(v, tensors) for k, v in value["$dict"]}
    return {k: _decode(v, tensors) for k, v in value.items()}
