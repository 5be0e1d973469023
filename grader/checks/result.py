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
