"""The one shape every check returns, so the service can store and show it."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class CheckResult:
    """Outcome of one check, written for a learner.

    `message` says what was expected, what came back and, when known, why.
    `diagnosis` names a known mistake (e.g. "missing-scale") so the service
    can count misconceptions and schedule the lessons that teach them.
    """

    name: str
    passed: bool
    message: str
    expected: str | None = None
    got: str | None = None
    diagnosis: str | None = None
    hidden: bool = False

    def to_dict(self) -> dict:
        return asdict(self)


def fail(
    name: str,
    message: str,
    *,
    diagnosis: str | None = None,
    hidden: bool = False,
    **fields,
) -> CheckResult:
    """A failed check; keyword-only, so a diagnosis is never taken for a flag."""
    return CheckResult(
        name, False, message, diagnosis=diagnosis, hidden=hidden, **fields
    )


def likely_mistake(
    name: str, message: str, *, diagnosis: str | None, hidden: bool
) -> CheckResult:
    """The extra failed check that names the mistake behind a wrong answer."""
    return fail(f"{name}: likely mistake", message, diagnosis=diagnosis, hidden=hidden)
