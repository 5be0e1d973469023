"""Trusted comparisons of learner results with the reference (no Django)."""

from grading_engine.checks.result import CheckResult

__all__ = ["CheckResult"]
