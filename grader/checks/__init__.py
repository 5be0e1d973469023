"""Trusted comparisons of learner results with the reference (no Django)."""

from grader.checks.result import CheckResult

__all__ = ["CheckResult"]
