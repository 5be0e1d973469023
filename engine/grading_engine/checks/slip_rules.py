"""A known mistake is named only when it agrees with every case the grade ran.

One case alone can point at the wrong mistake. Code that hard-codes 4 bytes
per element gives half the answer on a case that uses 8, exactly what
"forgot K or V" gives there, and the right answer on a case that uses 4,
where "forgot K or V" would not: naming it would teach a wrong lesson, which
is worse than naming nothing.

So a declared judge (checks.judges) tells, for one case, whether the
learner's output there is what a named slip gives (`slip_agrees`), and
grading.judge rules out every named slip that some case contradicts, then
judges the cases again. The functions that name slips (values.slip_diagnosis,
floats.float_close, fingerprints.find_match, answers.wrong_shape_mistake)
skip what is ruled out, so another slip that agrees everywhere can still be
named. The cost is paid only when a failed grade named a slip. Value judges
also list every slip of a case (`slip_candidates`), so a tie on one case
(two slips, one number: neither named) is broken by a case where they
differ (grading.judge_cases).
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager

from grading_engine.expected import one_check

_ruled_out: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar(
    "grading_engine_ruled_out", default=frozenset()
)


def ruled_out(diagnosis: str | None) -> bool:
    """Whether this grade may no longer name `diagnosis`."""
    return diagnosis is not None and diagnosis in _ruled_out.get()


@contextmanager
def ruling_out(diagnoses: set[str]) -> Iterator[None]:
    token = _ruled_out.set(_ruled_out.get() | frozenset(diagnoses))
    try:
        yield
    finally:
        _ruled_out.reset(token)


def contradicted(agrees, runs: list[tuple[dict, dict, dict]], named: set[str]) -> set:
    """The named slips that some run (case, data, tensors) contradicts.

    `agrees(case, data, tensors, diagnosis)` is True where the learner's
    output on that case is the slip's, False where it is not, and None where
    it cannot tell (the slip does not apply to that case, or is not one the
    judge knows): only a False rules a slip out.
    """
    out: set[str] = set()
    for case, data, tensors in runs:
        with one_check():  # each case's expectations computed once
            for diagnosis in named - out:
                try:
                    verdict = agrees(case, data, tensors, diagnosis)
                except Exception:  # noqa: BLE001 - malformed data cannot tell
                    verdict = None
                if verdict is False:
                    out.add(diagnosis)
    return out
