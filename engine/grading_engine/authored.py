"""An exercise authored as data: its inputs, cases, comparisons and mistakes.

A built-in exercise is a harness module written in Python inside the engine.
An authored one (issue 46) is a declaration an admin writes in the browser
or in a content file, graded by one shared harness
(grading_engine.exercises.authored runs a case in the child):

* `inputs`: the function's parameters in order, each a tensor (its shape in
  ints or size names, dtype, normal or uniform values), an int, a float, an
  arange, a piece of the course's GPT-2 reference (its config, the model, a
  block, an attention or MLP layer, seeded per case), or a value the
  author's `generator` (Python: `make_inputs(sizes, generator)`) makes;
* `cases`: named, visible or hidden, each with its sizes (fixed for a
  visible case; `{"between": [lo, hi]}` or `{"one_of": [...]}` drawn per
  attempt for a hidden one);
* `outputs`: what the function returns (one tensor, or a tuple of them),
  each compared for type, shape, dtype and values (`rtol`, `atol`, or
  `exact`), or a returned module compared by its parameter count
  (`parameters`); and gradients (`gradient_of` an input: the gradient of a
  seeded weighting of the returned tensors); an input changed in place
  fails as in every exercise;
* `reference` (the exercise's solution) and `mistakes` (its known wrong
  solutions: diagnosis, message, code).

The answers are code the author wrote, so they run in the sandbox like a
learner's code, one job each (`AuthoredJobs`): the reference's outputs are
what the learner's are judged against, and a wrong answer that matches a
mistake's output is named with its diagnosis, through the same judges as the
built-in exercises. An author's mistake can fail a grade, never hurt a
worker. `harness_for` builds the module-like object grading.grade judges
with; its two expectations ship to `course check` like a built-in's.

`parse` checks a declaration and says which field is wrong; nothing here
imports torch, so the admin's form and the content loader can call it.
"""

from __future__ import annotations

import ast
import hashlib
import json
import random
import re
import types
from collections.abc import Callable
from dataclasses import dataclass

HARNESS = "authored"
MAX_CASES = 20
MAX_INPUTS = 12
MAX_OUTPUTS = 8
MAX_MISTAKES = 20
MAX_CODE_CHARS = 50_000
MAX_SIZE = 1_000_000
# What one case's inputs may weigh at its largest draw: a case is for
# telling answers apart, not for load (and a job's memory is capped).
MAX_CASE_BYTES = 8 * 2**20
DTYPES = {"float32": 4, "float64": 8, "int64": 8, "bool": 1}
INPUT_KINDS = ("tensor", "int", "float", "arange", "gpt2", "generated")
# Pieces of the course's GPT-2 (grading_engine.reference.model) an input may
# be, built on the "tiny" config with the input's overrides.
GPT2_PARTS = ("config", "model", "block", "attention", "mlp")
GPT2_BASE = {
    "vocab_size": 97,
    "block_size": 16,
    "n_layer": 2,
    "n_head": 2,
    "n_embd": 16,
}
GPT2_MOST = {
    "vocab_size": 50257,
    "block_size": 1024,
    "n_layer": 4,
    "n_head": 32,
    "n_embd": 1024,
}
GENERATOR = "make_inputs"
DEFAULT_RTOL, DEFAULT_ATOL = 1e-4, 1e-5
MAX_RESULT_BYTES = 64 * 2**20  # as a learner's (grading.MAX_RESULT_BYTES)
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,39}$")
_DIAGNOSIS = re.compile(r"^[a-z0-9][a-z0-9-]{0,79}$")


class DeclarationError(ValueError):
    """A declaration that cannot be graded; `field` says where, as a path."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field, self.message = field, message


@dataclass(frozen=True)
class Output:
    name: str
    rtol: float
    atol: float
    axes: tuple[str, ...] | None
    what: str
    parameters: bool = False  # a returned module, compared by its count
    gradient_of: str | None = None  # not returned: an input's gradient

    @property
    def returned(self) -> bool:
        return self.gradient_of is None


@dataclass(frozen=True)
class Mistake:
    diagnosis: str
    message: str
    code: str


@dataclass(frozen=True)
class Declaration:
    entry_point: str
    inputs: list[dict]
    cases: list[dict]
    outputs: list[Output]
    reference: str
    mistakes: list[Mistake]
    generator: str = ""

    def keys(self) -> list[tuple[Output, str]]:
        """Each output with the key the child captures it under: "output"
        for a lone returned value, else its name."""
        returned = [o for o in self.outputs if o.returned]
        return [
            (o, "output" if o.returned and len(returned) == 1 else o.name)
            for o in self.outputs
        ]

    def draw_cases(self, seed: int) -> list[dict]:
        """The case specs of one attempt: visible cases the same for every
        seed, hidden ones drawn from it (sizes and values)."""
        from grading_engine.exercises.kit.cases import case_seed

        rng = random.Random(seed)
        made = []
        for index, case in enumerate(self.cases):
            sizes = {name: _draw(rng, value) for name, value in case["sizes"].items()}
            spec = {
                "name": case["name"],
                "hidden": case["hidden"],
                "sizes": sizes,
                "inputs": self.inputs,
                "outputs": [o.name for o in self.outputs if o.returned],
                **self._capture(),
            }
            spec["seed"] = case_seed(rng, spec, index)
            made.append(spec)
        return made

    def _capture(self) -> dict:
        """What the child captures beyond the returned values."""
        spec: dict = {}
        if counted := [o.name for o in self.outputs if o.parameters]:
            spec["parameters"] = counted
        if gradients := {
            o.name: [i["name"] for i in self.inputs].index(o.gradient_of)
            for o in self.outputs
            if o.gradient_of
        }:
            spec["gradients"] = gradients
        if self.generator:
            spec["generator"] = self.generator
        return spec

    def public(self) -> dict:
        """The declaration a learner's `course check` may have: the inputs,
        the visible cases and the comparisons (no hidden case, no code)."""
        return {
            "inputs": self.inputs,
            "cases": [case for case in self.cases if not case["hidden"]],
            "outputs": [
                {
                    "name": o.name,
                    **({} if o.parameters else {"rtol": o.rtol, "atol": o.atol}),
                    **({"axes": list(o.axes)} if o.axes else {}),
                    "what": o.what,
                    **({"parameters": True} if o.parameters else {}),
                    **({"gradient_of": o.gradient_of} if o.gradient_of else {}),
                }
                for o in self.outputs
            ],
            # How inputs are made is not the answer; a local check needs it.
            **({"generator": self.generator} if self.generator else {}),
        }

    def digest(self) -> str:
        """What a stored verification or cached expectation was made from."""
        text = json.dumps(
            [
                self.entry_point,
                self.inputs,
                self.cases,
                [vars(o) for o in self.outputs],
                self.reference,
                [vars(m) for m in self.mistakes],
                self.generator,
            ],
            sort_keys=True,
        )
        return hashlib.sha256(text.encode()).hexdigest()


def _draw(rng: random.Random, value) -> int:
    if isinstance(value, int):
        return value
    if "between" in value:
        return rng.randint(*value["between"])
    return rng.choice(value["one_of"])


# -- parse: every field checked, the first problem named -----------------------


def parse(
    declaration, *, entry_point: str, reference: str | None, mistakes=()
) -> Declaration:
    """The declaration as the grader uses it, or DeclarationError naming the
    field: `declaration` is the JSON object (inputs, cases, outputs),
    `reference` the solution's code, `mistakes` [{diagnosis, message, code}].
    A learner's client has no reference (None): its values come shipped."""
    if not isinstance(declaration, dict):
        raise DeclarationError(
            "declaration", "must be an object with inputs, cases, outputs"
        )
    unknown = set(declaration) - {"inputs", "cases", "outputs", "generator"}
    if unknown:
        raise DeclarationError("declaration", f"unknown key {sorted(unknown)[0]!r}")
    if not isinstance(entry_point, str) or not _NAME.match(entry_point):
        raise DeclarationError("entry_point", "must be a Python function name")
    inputs = _inputs(declaration.get("inputs"))
    generator = ""
    if any("generated" in spec for spec in inputs) or "generator" in declaration:
        generator = _code("generator", declaration.get("generator"), GENERATOR)
        if not any("generated" in spec for spec in inputs):
            raise DeclarationError(
                "generator", 'no input is "generated": true, so it makes nothing'
            )
    sizes_used = {value for spec in inputs for value in _size_names(spec)}
    cases = _cases(declaration.get("cases"), sizes_used)
    outputs = _outputs(declaration.get("outputs"), inputs)
    for index, case in enumerate(cases):
        weight = _case_bytes(inputs, case["sizes"])
        if weight > MAX_CASE_BYTES:
            raise DeclarationError(
                f"cases[{index}]",
                f"case {case['name']!r} builds {weight / 2**20:.1f} MB of inputs "
                f"at its largest sizes; the cap is {MAX_CASE_BYTES // 2**20} MB: "
                "use smaller sizes",
            )
    if reference is not None:
        _code("solution", reference, entry_point)
    return Declaration(
        entry_point=entry_point,
        inputs=inputs,
        cases=cases,
        outputs=outputs,
        reference=reference or "",
        mistakes=_mistakes(mistakes, entry_point),
        generator=generator,
    )


def _list(value, field: str, most: int, what: str) -> list:
    if not isinstance(value, list) or not value:
        raise DeclarationError(field, f"must be a list of one or more {what}")
    if len(value) > most:
        raise DeclarationError(field, f"at most {most} {what}, not {len(value)}")
    return value


def _name(value, field: str, seen: set) -> str:
    if not isinstance(value, str) or not _NAME.match(value):
        raise DeclarationError(field, "must be a Python name (letters, digits, _)")
    if value in seen:
        raise DeclarationError(field, f"{value!r} is named twice")
    seen.add(value)
    return value


def _number(value, field: str, *, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise DeclarationError(field, "must be a number")
    if not low <= value <= high:
        raise DeclarationError(field, f"must be from {low:g} to {high:g}")
    return float(value)


def _dim(value, field: str):
    """An int size or the name of a size the cases give."""
    if isinstance(value, str):
        return _name(value, field, set())
    if isinstance(value, bool) or not isinstance(value, int):
        raise DeclarationError(field, "must be an int or the name of a size")
    if not 0 <= value <= MAX_SIZE:
        raise DeclarationError(field, f"must be from 0 to {MAX_SIZE:,}")
    return value


def _inputs(value) -> list[dict]:
    specs, seen = [], set()
    for i, spec in enumerate(_list(value, "inputs", MAX_INPUTS, "inputs")):
        field = f"inputs[{i}]"
        if not isinstance(spec, dict):
            raise DeclarationError(field, "must be an object")
        kinds = [kind for kind in INPUT_KINDS if kind in spec]
        if len(kinds) != 1:
            raise DeclarationError(
                field, f"give exactly one of {', '.join(INPUT_KINDS)}"
            )
        kind = kinds[0]
        allowed = {"name", kind} | {
            "tensor": {"dtype", "range", "scale"},
            "arange": {"start"},
            "gpt2": {"config"},
        }.get(kind, set())
        if unknown := set(spec) - allowed:
            raise DeclarationError(field, f"unknown key {sorted(unknown)[0]!r}")
        clean = {"name": _name(spec.get("name"), f"{field}.name", seen)}
        if kind == "tensor":
            clean.update(_tensor_spec(spec, field))
        elif kind == "float":
            clean["float"] = _number(
                spec["float"], f"{field}.float", low=-1e30, high=1e30
            )
        elif kind == "gpt2":
            clean.update(_gpt2_spec(spec, field))
        elif kind == "generated":
            if spec["generated"] is not True:
                raise DeclarationError(f"{field}.generated", "must be true")
            clean["generated"] = True
        else:
            clean[kind] = _dim(spec[kind], f"{field}.{kind}")
            if "start" in spec:
                clean["start"] = _dim(spec["start"], f"{field}.start")
        specs.append(clean)
    return specs


def _tensor_spec(spec: dict, field: str) -> dict:
    shape = spec["tensor"]
    if not isinstance(shape, list) or len(shape) > 6:
        raise DeclarationError(
            f"{field}.tensor", "must be a shape: a list of up to 6 sizes"
        )
    clean = {"tensor": [_dim(d, f"{field}.tensor[{j}]") for j, d in enumerate(shape)]}
    dtype = spec.get("dtype", "float32")
    if dtype not in DTYPES:
        raise DeclarationError(f"{field}.dtype", f"must be one of {', '.join(DTYPES)}")
    clean["dtype"] = dtype
    if "range" in spec:
        bounds = spec["range"]
        if not isinstance(bounds, list) or len(bounds) != 2:
            raise DeclarationError(f"{field}.range", "must be [low, high]")
        low, high = (_number(b, f"{field}.range", low=-1e30, high=1e30) for b in bounds)
        if not low < high:
            raise DeclarationError(f"{field}.range", "low must be below high")
        if dtype == "int64":
            low, high = int(low), int(high)
        clean["range"] = [low, high]
    elif dtype == "int64":
        raise DeclarationError(
            f"{field}.range", "an int64 tensor needs its [low, high) range"
        )
    if "scale" in spec:
        clean["scale"] = _number(spec["scale"], f"{field}.scale", low=0, high=1e30)
    return clean


def _gpt2_spec(spec: dict, field: str) -> dict:
    part = spec["gpt2"]
    if part not in GPT2_PARTS:
        raise DeclarationError(
            f"{field}.gpt2", f"must be one of {', '.join(GPT2_PARTS)}"
        )
    config = spec.get("config", {})
    if not isinstance(config, dict):
        raise DeclarationError(f"{field}.config", "must be an object of sizes")
    clean = {}
    for key, value in config.items():
        where = f"{field}.config.{key}"
        if key == "tied":
            if not isinstance(value, bool):
                raise DeclarationError(where, "must be true or false")
            clean[key] = value
            continue
        if key not in GPT2_MOST:
            known = ", ".join([*GPT2_MOST, "tied"])
            raise DeclarationError(where, f"unknown; a GPT-2 config has {known}")
        if isinstance(value, bool) or not isinstance(value, int):
            raise DeclarationError(where, "must be an int")
        if not 1 <= value <= GPT2_MOST[key]:
            raise DeclarationError(where, f"must be from 1 to {GPT2_MOST[key]:,}")
        clean[key] = value
    sizes = {**GPT2_BASE, **clean}
    if sizes["n_embd"] % sizes["n_head"]:
        raise DeclarationError(f"{field}.config", "n_embd must be a multiple of n_head")
    return {"gpt2": part, "config": clean}


def _gpt2_bytes(spec: dict) -> int:
    """The float32 weights of the model a GPT-2 input is built from."""
    c = {**GPT2_BASE, **spec["config"]}
    e, v = c["n_embd"], c["vocab_size"]
    block = 12 * e * e + 13 * e
    head = 0 if spec["config"].get("tied", True) else v * e
    return 4 * (v * e + c["block_size"] * e + c["n_layer"] * block + 2 * e + head)


def _size_names(spec: dict) -> list[str]:
    values = list(spec.get("tensor", [])) + [
        spec.get(k) for k in ("int", "arange", "start")
    ]
    return [v for v in values if isinstance(v, str)]


def _cases(value, sizes_used: set[str]) -> list[dict]:
    cases, seen = [], set()
    for i, case in enumerate(_list(value, "cases", MAX_CASES, "cases")):
        field = f"cases[{i}]"
        if not isinstance(case, dict):
            raise DeclarationError(field, "must be an object")
        if unknown := set(case) - {"name", "hidden", "sizes"}:
            raise DeclarationError(field, f"unknown key {sorted(unknown)[0]!r}")
        name = case.get("name")
        if not isinstance(name, str) or not name.strip() or len(name) > 100:
            raise DeclarationError(
                f"{field}.name", "must be a text of 1 to 100 characters"
            )
        if name in seen:
            raise DeclarationError(f"{field}.name", f"{name!r} is named twice")
        seen.add(name)
        hidden = case.get("hidden", False)
        if not isinstance(hidden, bool):
            raise DeclarationError(f"{field}.hidden", "must be true or false")
        sizes = case.get("sizes", {})
        if not isinstance(sizes, dict):
            raise DeclarationError(f"{field}.sizes", "must be an object of sizes")
        if missing := sorted(sizes_used - set(sizes)):
            raise DeclarationError(
                f"{field}.sizes", f"gives no size {missing[0]!r}, which the inputs use"
            )
        clean = {}
        for size, spec in sizes.items():
            where = f"{field}.sizes.{size}"
            _name(size, where, set())
            clean[size] = _size_value(spec, where, hidden)
        cases.append({"name": name, "hidden": hidden, "sizes": clean})
    if all(case["hidden"] for case in cases):
        raise DeclarationError("cases", "give at least one visible case")
    return cases


def _size_value(spec, field: str, hidden: bool):
    if isinstance(spec, dict) and hidden:
        if list(spec) == ["between"] and isinstance(spec["between"], list):
            bounds = [_dim(b, f"{field}.between") for b in spec["between"]]
            if len(bounds) != 2 or not all(isinstance(b, int) for b in bounds):
                raise DeclarationError(f"{field}.between", "must be [low, high] ints")
            if bounds[0] > bounds[1]:
                raise DeclarationError(f"{field}.between", "low must not be above high")
            return {"between": bounds}
        if (
            list(spec) == ["one_of"]
            and isinstance(spec["one_of"], list)
            and spec["one_of"]
        ):
            return {"one_of": [_int_dim(v, f"{field}.one_of") for v in spec["one_of"]]}
        raise DeclarationError(
            field, 'must be an int, {"between": [lo, hi]} or {"one_of": [...]}'
        )
    if isinstance(spec, dict):
        raise DeclarationError(
            field, "a visible case has fixed sizes (the same for every attempt)"
        )
    return _int_dim(spec, field)


def _int_dim(value, field: str) -> int:
    if isinstance(value, str):
        raise DeclarationError(field, "must be an int")
    return _dim(value, field)


_OUTPUT_KEYS = {"name", "rtol", "atol", "exact", "axes", "what"}


def _outputs(value, inputs: list[dict]) -> list[Output]:
    outputs, seen = [], set()
    tensors = {
        spec["name"] for spec in inputs if "tensor" in spec or "generated" in spec
    }
    for i, spec in enumerate(_list(value, "outputs", MAX_OUTPUTS, "outputs")):
        field = f"outputs[{i}]"
        if not isinstance(spec, dict):
            raise DeclarationError(field, "must be an object")
        allowed = _OUTPUT_KEYS | {"parameters", "gradient_of"}
        if unknown := set(spec) - allowed:
            raise DeclarationError(field, f"unknown key {sorted(unknown)[0]!r}")
        name = _name(spec.get("name"), f"{field}.name", seen)
        parameters = spec.get("parameters", False)
        gradient_of = spec.get("gradient_of")
        if not isinstance(parameters, bool):
            raise DeclarationError(f"{field}.parameters", "must be true or false")
        if gradient_of is not None and gradient_of not in tensors:
            raise DeclarationError(
                f"{field}.gradient_of",
                f"must name a tensor input ({', '.join(sorted(tensors)) or 'none'})",
            )
        if parameters and gradient_of is not None:
            raise DeclarationError(
                field, "an output is a returned module or a gradient, not both"
            )
        if parameters and set(spec) & {"rtol", "atol", "exact", "axes"}:
            raise DeclarationError(
                f"{field}.parameters", "a parameter count is compared exactly"
            )
        exact = parameters or spec.get("exact", False)
        if not isinstance(exact, bool):
            raise DeclarationError(f"{field}.exact", "must be true or false")
        if exact and not parameters and ("rtol" in spec or "atol" in spec):
            raise DeclarationError(
                f"{field}.exact", "an exact output has no rtol or atol"
            )
        rtol = (
            0.0
            if exact
            else _number(spec.get("rtol", DEFAULT_RTOL), f"{field}.rtol", low=0, high=1)
        )
        atol = (
            0.0
            if exact
            else _number(spec.get("atol", DEFAULT_ATOL), f"{field}.atol", low=0, high=1)
        )
        axes = spec.get("axes")
        if axes is not None and (
            not isinstance(axes, list)
            or not all(isinstance(a, str) and 0 < len(a) <= 40 for a in axes)
        ):
            raise DeclarationError(f"{field}.axes", "must be a list of axis names")
        default = f"`{name}`" if len(value) > 1 else "the output"
        if gradient_of:
            default = f"the gradient with respect to `{gradient_of}`"
        elif parameters:
            default = "the module's parameter count"
        what = spec.get("what", default)
        if not isinstance(what, str) or len(what) > 120:
            raise DeclarationError(f"{field}.what", "must be a short text")
        outputs.append(
            Output(
                name,
                rtol,
                atol,
                tuple(axes) if axes else None,
                what,
                parameters,
                gradient_of,
            )
        )
    if all(output.gradient_of for output in outputs):
        raise DeclarationError("outputs", "give at least one returned output")
    return outputs


def _mistakes(value, entry_point: str) -> list[Mistake]:
    if not isinstance(value, list | tuple) or len(value) > MAX_MISTAKES:
        raise DeclarationError(
            "wrong_solutions", f"must be a list of at most {MAX_MISTAKES}"
        )
    mistakes = []
    for i, item in enumerate(value):
        field = f"wrong_solutions[{i}]"
        if not isinstance(item, dict):
            raise DeclarationError(field, "must be an object")
        diagnosis = item.get("diagnosis")
        if not isinstance(diagnosis, str) or not _DIAGNOSIS.match(diagnosis):
            raise DeclarationError(f"{field}.diagnosis", "must be a diagnosis slug")
        message = item.get("message") or ""
        if not isinstance(message, str) or len(message) > 1000:
            raise DeclarationError(
                f"{field}.message", "must be a text of up to 1000 characters"
            )
        code = _code(f"{field}.code", item.get("code"), entry_point)
        mistakes.append(Mistake(diagnosis, message, code))
    return mistakes


def _code(field: str, code, entry_point: str) -> str:
    """Code that parses and defines the entry point (not run here: it runs
    in the sandbox)."""
    if not isinstance(code, str) or not code.strip():
        raise DeclarationError(field, "is empty")
    if len(code) > MAX_CODE_CHARS:
        raise DeclarationError(field, f"is over {MAX_CODE_CHARS:,} characters")
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        raise DeclarationError(field, f"line {exc.lineno}: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise DeclarationError(
            field, f"cannot be read ({type(exc).__name__})"
        ) from None
    defined = {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    if entry_point not in defined:
        raise DeclarationError(field, f"defines no function {entry_point}()")
    return code


def _case_bytes(inputs: list[dict], sizes: dict) -> int:
    """The bytes a case's inputs take at its largest sizes."""
    largest = {
        name: value
        if isinstance(value, int)
        else max(value.get("between") or value.get("one_of"))
        for name, value in sizes.items()
    }
    total = 0
    for spec in inputs:
        if "tensor" in spec:
            numel = 1
            for dim in spec["tensor"]:
                numel *= largest[dim] if isinstance(dim, str) else dim
            total += numel * DTYPES[spec["dtype"]]
        elif "arange" in spec:
            dim = spec["arange"]
            total += 8 * (largest[dim] if isinstance(dim, str) else dim)
        elif "gpt2" in spec:
            total += _gpt2_bytes(spec)
    return total


# -- grading: the author's code run in the sandbox, judged by the shared judges --


class AuthoredError(RuntimeError):
    """The author's code did not give what the declaration says (a case
    that raised, a missing output): the exercise's fault, not the learner's."""


class AuthoredJobs:
    """The reference's and each mistake's outputs on one grade's cases, each
    run at most once (as a sandbox job, as a learner's code is)."""

    def __init__(self, declaration: Declaration, cases: list[dict], run: Callable):
        self.declaration, self.cases, self._run = declaration, cases, run
        self._outputs: dict[str, list] = {}

    def outputs(self, code: str, who: str) -> list[dict | str]:
        """Per case: {output name: tensor}, or why there is none."""
        if code not in self._outputs:
            self._outputs[code] = self._collect(code, who)
        return self._outputs[code]

    def _collect(self, code: str, who: str) -> list[dict | str]:
        from grading_engine.harness.wire import WireError, decode_result

        outcome = self._run(
            {
                "code": code,
                "entry_point": self.declaration.entry_point,
                "harness": HARNESS,
                "cases": self.cases,
            }
        )
        if not outcome.result:
            why = "timed out" if outcome.timed_out else "ended without a result"
            raise AuthoredError(f"the {who} {why}")
        try:
            meta, tensors = decode_result(outcome.result, max_bytes=MAX_RESULT_BYTES)
        except WireError as exc:
            why = f"the {who} gave a result the grader cannot read ({exc})"
            raise AuthoredError(why) from None

        if meta["error"] is not None:
            error = meta["error"]
            line = f"line {error['line']}: " if error.get("line") else ""
            raise AuthoredError(
                f"the {who} failed: {line}{error['type']}: {error['message']}"
            )
        if len(meta["cases"]) != len(self.cases):
            raise AuthoredError(f"the {who} gave no result for some cases")
        per_case: list[dict | str] = []
        for index, record in enumerate(meta["cases"]):
            data = record.get("data") or {}
            raised = data.get("error") if record.get("ok") else record.get("error")
            if raised:
                per_case.append(f"{raised.get('type')}: {raised.get('message')}")
                continue
            got = {
                output.name: tensors.get(f"c{index}/{key}")
                for output, key in self.declaration.keys()
            }
            if any(value is None for value in got.values()):
                missing = [name for name, value in got.items() if value is None]
                per_case.append(f"returned no tensor for {', '.join(missing)}")
                continue
            per_case.append(got)
        return per_case

    def prepare(self) -> None:
        """Run the reference on every case now; AuthoredError if it gives
        no answer for one (a hidden case is not named)."""
        for index in range(len(self.cases)):
            self.right(index)

    def right(self, index: int) -> dict:
        """The right outputs of case `index`; AuthoredError if the
        reference did not give them."""
        got = self.outputs(self.declaration.reference, "reference solution")[index]
        if isinstance(got, str):
            case = self.cases[index]
            where = "a hidden case" if case["hidden"] else f"case {case['name']!r}"
            raise AuthoredError(f"the reference solution on {where}: {got}")
        return got


def harness_for(
    declaration: Declaration, cases: list[dict], run: Callable
) -> types.ModuleType:
    """A module-like harness for one grade of `declaration` on `cases`:
    what grading.judge reads (check_case and its slip rule, SLUG,
    ENTRY_POINT), with `run(job)` running the author's code in the sandbox.

    Its expectations (the reference's outputs, the mistakes' outputs) are
    named as a module's would be, so `course check` reads them shipped."""
    from grading_engine.checks.fingerprints import shipped_variants
    from grading_engine.expected import expectation

    jobs = AuthoredJobs(declaration, cases, run)
    index_of = {case["name"]: i for i, case in enumerate(cases)}
    module = types.ModuleType(__name__)

    def expected_output(case: dict) -> dict:
        """The reference's outputs on this case (shipped for visible cases)."""
        return jobs.right(index_of[case["name"]])

    def known_mistakes(case: dict) -> dict:
        """What each mistake gives on this case, by output name: the rows
        fingerprints.computed makes (None where the mistake raised)."""
        index = index_of[case["name"]]
        rows: dict[str, list] = {output.name: [] for output in declaration.outputs}
        for number, mistake in enumerate(declaration.mistakes):
            try:
                got = jobs.outputs(mistake.code, f"known wrong solution {number + 1}")
            except AuthoredError:  # it names nothing here; verifying says why
                got = [None] * len(cases)
            got = got[index]
            for name, found in rows.items():
                value = got.get(name) if isinstance(got, dict) else None
                found.append((mistake.diagnosis, value, mistake.message))
        return rows

    for fn in (expected_output, known_mistakes):
        fn.__module__, fn.__qualname__ = __name__, fn.__name__
        setattr(module, fn.__name__, expectation(fn))

    def variants(case: dict, name: str) -> list:
        return shipped_variants(module.known_mistakes(case)[name])

    module.check_case = _check_case(declaration, module.expected_output, variants)
    module.jobs = jobs
    module.SLUG, module.ENTRY_POINT = HARNESS, declaration.entry_point
    module.SIGNATURE = ""
    return module


def _check_case(declaration: Declaration, expected: Callable, variants: Callable):
    """tensor_answer on each declared output, after the usual raised and
    tuple checks; a slip rule as the built-in tensor judges have."""
    import torch

    from grading_engine.checks.answers import tensor_answer
    from grading_engine.checks.result import fail
    from grading_engine.checks.tensors import case_error, missing_parts

    pairs = declaration.keys()
    returned = [output.name for output in declaration.outputs if output.returned]

    def check_case(case: dict, data: dict, tensors: dict) -> list:
        hidden = bool(case["hidden"])
        if raised := case_error(case, data):
            return raised
        if len(returned) > 1 and (
            missing := missing_parts(
                f"{case['name']}: returned",
                data,
                len(returned),
                f"return a tuple of {len(returned)} tensors ({', '.join(returned)}); "
                "yours returned {kind}",
                hidden=hidden,
            )
        ):
            return missing
        want = expected(case)
        results = []
        for number, (output, key) in enumerate(pairs):
            right = want[output.name]
            if output.gradient_of and key not in tensors:
                label = f"{case['name']}: {output.name}: gradient"
                results.append(fail(label, _no_gradient(output, data), hidden=hidden))
                continue
            if output.parameters:
                results += _count_answer(
                    case, output, data, key, tensors.get(key), right,
                    variants(case, output.name), first=number == 0,
                )  # fmt: skip
                continue
            results += tensor_answer(
                case["name"] if len(pairs) == 1 else f"{case['name']}: {output.name}",
                data,
                tensors,
                right,
                variants=lambda name=output.name: variants(case, name),
                key=key,
                check_inputs=number == 0,
                rtol=output.rtol,
                atol=output.atol,
                hidden=hidden,
                axes=output.axes or tuple(f"axis {i}" for i in range(right.dim())),
                what=output.what,
            )
        return results

    def slip_agrees(case: dict, data: dict, tensors: dict, diagnosis: str):
        """Whether every output is the mistake's on this case (None where
        the mistake does not apply to it)."""
        if data.get("error"):
            return False
        agree = None
        for output, key in pairs:
            listed = [
                v for v in variants(case, output.name) if v.diagnosis == diagnosis
            ]
            values = []
            for variant in listed:
                try:
                    values.append(variant.compute())
                except ValueError:
                    continue
            if not values:
                return None
            got = tensors.get(key)
            if not isinstance(got, torch.Tensor):
                return False
            agree = any(
                value.shape == got.shape
                and torch.allclose(
                    got.double(),
                    value.double(),
                    rtol=output.rtol,
                    atol=output.atol,
                    equal_nan=True,
                )
                for value in values
            )
            if not agree:
                return False
        return agree

    check_case.slip_agrees = slip_agrees
    return check_case


def _count_answer(case, output, data, key, got, right, variants, *, first) -> list:
    """A returned module's parameter count against the reference's module's,
    the mistake named whose module has the same count."""
    from grading_engine.checks.in_place import input_changes
    from grading_engine.checks.result import CheckResult, fail

    hidden = bool(case["hidden"])
    name = f"{case['name']}: {output.name}: parameter count"
    results = input_changes(case["name"], data, hidden=hidden) if first else []
    if got is None:
        kind = (data.get(key) or {}).get("type", "nothing")
        message = f"returned {kind}: return the module (a torch.nn.Module)"
        return [*results, fail(name, message, hidden=hidden)]
    want, have = int(right), int(got)
    if want == have:
        return [*results, CheckResult(name, True, f"{have:,} parameters")]
    mistake = next((v for v in variants if _computed_count(v) == have), None)
    diagnosis = mistake.diagnosis if mistake else None
    message = (
        f"the module has {have:,} parameters ({have - want:+,}); "
        f"the reference's has {want:,}"
    ) + (f". Likely: {mistake.text()}" if mistake else "")
    return [
        *results,
        fail(
            name,
            message,
            expected=str(want),
            got=str(have),
            diagnosis=diagnosis,
            hidden=hidden,
        ),
    ]


def _computed_count(variant) -> int | None:
    try:
        value = variant.compute()
    except ValueError:  # the mistake gave nothing on this case
        return None
    return int(value) if value is not None and value.numel() == 1 else None


def _no_gradient(output: Output, data: dict) -> str:
    why = (data.get(output.name) or {}).get("why") or (
        "the returned tensors do not depend on it through autograd (a "
        ".detach(), torch.no_grad(), .item() or a NumPy round trip cuts the "
        "graph)"
    )
    return f"no gradient reached `{output.gradient_of}`: {why}"


def local_check(declaration: Declaration, run: Callable, *, engine: str) -> bytes:
    """The bundle `course check` grades the visible cases with: their specs,
    the reference's and the mistakes' outputs on them (run by `run(job)`, in
    the sandbox), and the public declaration (grading_engine.expected)."""
    from grading_engine import expected

    visible = [case for case in declaration.draw_cases(0) if not case["hidden"]]
    module = harness_for(declaration, visible, run)
    module.jobs.prepare()  # AuthoredError: a reference that fails a case
    return expected.encode(
        harness=HARNESS,
        engine=engine,
        cases=visible,
        expected=expected.compute(module, visible),
        declaration=declaration.public(),
    )


# A reference's hidden draws, tried when a version is verified: one job.
DRAWS_TRIED = 25


def failed_draws(declaration: Declaration, run: Callable, *, seeds=None) -> list[str]:
    """Where the reference gives no answer on the hidden cases of many
    attempts' draws (a size range it cannot take, say k above the
    vocabulary): one line per failing case and draw, empty when none. A
    grade draws one seed, verifying the reference once would try only it."""
    seeds = range(DRAWS_TRIED) if seeds is None else seeds
    drawn = [
        {**case, "name": f"{case['name']} (draw {seed}: {case['sizes']})"}
        for seed in seeds
        for case in declaration.draw_cases(seed)
        if case["hidden"]
    ]
    if not drawn:
        return []
    per_case = AuthoredJobs(declaration, drawn, run).outputs(
        declaration.reference, "reference solution"
    )
    return [
        f"{case['name']}: {why}"
        for case, why in zip(drawn, per_case, strict=True)
        if isinstance(why, str)
    ]
