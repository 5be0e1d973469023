"""A template's spec, checked; and the variant a seed draws from it.

A spec is the YAML mapping of content/quiz-templates/<slug>.yaml:

    slug, title, section, lessons   where it belongs in the course
    kind: numeric | choice          choice offers the answer among the
                                    misconceptions' answers, shuffled
    prompt, explanation             text with {name} or {name:,} fields:
                                    parameters, and {answer} in explanations
    params: {name: [values] | {from, to, step}}
    answer: a function of quiz_bank.answers
    tolerance: {absolute: x} | {relative: x}   (numeric; default exact)
    misconceptions: [{answer, diagnosis, says}]  wrong answers it explains

The same seed always draws the same parameters (random.Random seeded with
text is stable across processes and Python versions 3.2+).

A draw whose answers would be ambiguous is drawn again, from the same
generator: a misconception's value within the tolerance of the key (a
wrong method graded right) or of another misconception's (a wrong answer
given the wrong diagnosis), or, in a choice template, two options that read
the same. A seed whose first draw is clear keeps it, so what a stored seed
draws only changes when that draw was ambiguous.
"""

from __future__ import annotations

import math
import random
import string
from dataclasses import dataclass, field
from decimal import Decimal

from .answers import ANSWERS
from .numbers import within

KINDS = ("numeric", "choice")
# Draws a seed may take to find clear parameters; past this (a template
# that is nearly all ambiguous, which the template tests refuse) the first
# draw stands.
MAX_DRAWS = 100
_TOP_KEYS = {
    "slug",
    "title",
    "section",
    "lessons",
    "kind",
    "prompt",
    "explanation",
    "params",
    "answer",
    "tolerance",
    "misconceptions",
}
_FIELD_FORMATS = ("", ",")


class TemplateInvalid(ValueError):
    """A spec that cannot draw variants; the message says what to fix."""


@dataclass(frozen=True)
class Misconception:
    answer: str
    diagnosis: str
    says: str


@dataclass(frozen=True)
class Variant:
    """What one seed draws: the prompt, the key, and the wrong answers."""

    params: dict
    prompt: str
    answer: object
    explanation: str
    # choice: option texts in a fixed order (shuffling is the attempt's job)
    options: list[str] = field(default_factory=list)
    correct_option: int | None = None
    # each misconception's value for these parameters, in spec order
    wrong: list[tuple[Misconception, object]] = field(default_factory=list)


def _fields(text: str) -> list[tuple[str, str]]:
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise TemplateInvalid(f"bad {{field}} in {text[:60]!r}: {exc}") from None
    found = []
    for _literal, name, spec, conversion in parsed:
        if name is None:
            continue
        if not name.isidentifier() or conversion or spec not in _FIELD_FORMATS:
            raise TemplateInvalid(
                f"field {{{name}{':' + spec if spec else ''}}} in {text[:60]!r}: "
                "use {name} or {name:,} with a parameter's name"
            )
        found.append((name, spec))
    return found


def _values(name: str, rule) -> list:
    if isinstance(rule, list) and rule:
        return list(rule)
    if isinstance(rule, dict) and set(rule) <= {"from", "to", "step"}:
        try:
            start, stop = int(rule["from"]), int(rule["to"])
            step = int(rule.get("step", 1))
        except (KeyError, TypeError, ValueError):
            raise TemplateInvalid(
                f"params.{name}: from and to (whole numbers) are required"
            ) from None
        if step < 1 or stop < start:
            raise TemplateInvalid(f"params.{name}: need from <= to and step >= 1")
        return list(range(start, stop + 1, step))
    raise TemplateInvalid(f"params.{name}: give a list of values or {{from, to, step}}")


def check(spec: dict) -> dict:
    """The spec if it can draw variants, else TemplateInvalid saying why."""
    if not isinstance(spec, dict):
        raise TemplateInvalid("a template is a mapping")
    unknown = set(spec) - _TOP_KEYS
    if unknown:
        raise TemplateInvalid(f"unknown keys: {', '.join(sorted(unknown))}")
    for key in ("slug", "title", "section", "kind", "prompt", "answer", "params"):
        if not spec.get(key):
            raise TemplateInvalid(f"{key} is required")
    if spec["kind"] not in KINDS:
        raise TemplateInvalid(f"kind must be one of {', '.join(KINDS)}")
    if not isinstance(spec["params"], dict):
        raise TemplateInvalid("params is a mapping of name to values")
    for name, rule in spec["params"].items():
        if not str(name).isidentifier():
            raise TemplateInvalid(f"params: {name!r} is not a name")
        _values(name, rule)
    names = set(spec["params"])
    for name, _ in _fields(spec["prompt"]):
        if name not in names:
            raise TemplateInvalid(f"prompt uses {{{name}}}, which is no parameter")
    for name, _ in _fields(spec.get("explanation", "")):
        if name not in names | {"answer"}:
            raise TemplateInvalid(f"explanation uses {{{name}}}, which is no parameter")
    for fn in [spec["answer"], *(m.get("answer") for m in _misc(spec))]:
        if fn not in ANSWERS:
            raise TemplateInvalid(f"no answer function {fn!r} in quiz_bank.answers")
    tolerance(spec)
    if spec["kind"] == "choice" and not _misc(spec):
        raise TemplateInvalid("a choice template needs misconceptions (its options)")
    return spec


def _misc(spec: dict) -> list[dict]:
    items = spec.get("misconceptions") or []
    if not isinstance(items, list) or not all(isinstance(m, dict) for m in items):
        raise TemplateInvalid("misconceptions is a list of {answer, diagnosis, says}")
    for m in items:
        if not m.get("answer") or not m.get("says"):
            raise TemplateInvalid("each misconception needs answer and says")
    return items


def tolerance(spec: dict) -> tuple[float, float]:
    """(absolute, relative) tolerance of a numeric template."""
    rule = spec.get("tolerance") or {}
    if not isinstance(rule, dict) or not set(rule) <= {"absolute", "relative"}:
        raise TemplateInvalid("tolerance is {absolute: x} or {relative: x}")
    try:
        absolute = float(rule.get("absolute", 0))
        relative = float(rule.get("relative", 0))
    except (TypeError, ValueError):
        raise TemplateInvalid("tolerance values are numbers") from None
    if not (absolute >= 0 and relative >= 0) or not math.isfinite(absolute + relative):
        raise TemplateInvalid("tolerance values are finite and >= 0")
    return absolute, relative


def show(value) -> str:
    """An answer as a learner reads it: 124,439,808; 0.5; (2, 12, 10, 64).

    Whole numbers, and any number from a million up (a count that large
    reads as a whole number), take digit groups: 1,414,213,562,373. Other
    numbers read exactly when ten significant digits hold them (0.2499975),
    else to six (0.731059), or more when six would make a fraction look
    whole (0.999999998, never 1).
    """
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if not math.isfinite(value) or abs(value) >= 1e15:
            return f"{value:.6g}"
        if value.is_integer() or abs(value) >= 1e6:
            return f"{round(value):,}"
        return _fraction(value)
    if isinstance(value, tuple):
        return (
            "(" + ", ".join(str(v) for v in value) + (",)" if len(value) == 1 else ")")
        )
    return str(value)


def _fraction(value: float) -> str:
    for digits in range(6, 11):  # exactly, if it is a short decimal
        text = f"{value:,.{digits}g}"
        if math.isclose(float(text.replace(",", "")), value, rel_tol=1e-14):
            return text
    for digits in range(6, 16):  # else rounded, but never to a whole number
        text = f"{value:,.{digits}g}"
        if "." in text or "e" in text:
            return text
    return text


def _number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _decimal(value) -> Decimal:
    return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)


def _clash(a, b, absolute: float, relative: float) -> bool:
    """Whether a is within the tolerance of b or b of a (or both read alike)."""
    if _number(a) and _number(b):
        scale = max(abs(a), abs(b))
        if abs(a - b) > 1.01 * max(absolute, relative * scale) + 1e-12 * scale:
            return False  # clearly apart, whatever the float rounding
        return within(_decimal(a), b, absolute, relative) or within(
            _decimal(b), a, absolute, relative
        )
    return show(a) == show(b)


def _answers(
    spec: dict, params: dict
) -> tuple[object, list[tuple[Misconception, object]]]:
    key = ANSWERS[spec["answer"]](**params)
    wrong = [
        (
            Misconception(m["answer"], m.get("diagnosis", ""), m["says"]),
            ANSWERS[m["answer"]](**params),
        )
        for m in _misc(spec)
    ]
    return key, wrong


def clashes(spec: dict, params: dict) -> list[str]:
    """Why `params` are never drawn from a checked spec; [] if they may be.

    Numeric: no misconception's value within the tolerance of the key or of
    another misconception's (either way round). Choice: every option reads
    differently.
    """
    key, wrong = _answers(spec, params)
    named = [("the answer", key), *((m.answer, value) for m, value in wrong)]
    numeric = spec["kind"] != "choice"
    absolute, relative = tolerance(spec) if numeric else (0.0, 0.0)
    found = []
    for i, (name_a, a) in enumerate(named):
        for name_b, b in named[i + 1 :]:
            if _clash(a, b, absolute, relative) if numeric else show(a) == show(b):
                found.append(f"{name_b} ({show(b)}) reads as {name_a} ({show(a)})")
    return found


def draw(spec: dict, seed: str | int) -> dict:
    """The parameters `seed` draws: one value per parameter, in spec order,
    drawn again from the same generator while they clash (see `clashes`).
    The first draw stands if MAX_DRAWS draws all clash."""
    rng = random.Random(f"{spec['slug']}:{seed}")
    grid = [(name, _values(name, rule)) for name, rule in spec["params"].items()]
    first = None
    for _ in range(MAX_DRAWS):
        params = {name: rng.choice(values) for name, values in grid}
        if first is None:
            first = params
        if not clashes(spec, params):
            return params
    return first


def _fill(text: str, values: dict) -> str:
    return text.format(**values) if text else ""


def render(spec: dict, seed: str | int) -> Variant:
    """The variant `seed` draws from a checked spec."""
    params = draw(spec, seed)
    key, wrong = _answers(spec, params)
    options: list[str] = []
    correct = None
    if spec["kind"] == "choice":
        options = [show(key)]
        correct = 0
        for _m, value in wrong:
            text = show(value)
            if text not in options:
                options.append(text)
    return Variant(
        params=params,
        prompt=_fill(spec["prompt"], params),
        answer=key,
        explanation=_fill(spec.get("explanation", ""), {**params, "answer": show(key)}),
        options=options,
        correct_option=correct,
        wrong=wrong,
    )
