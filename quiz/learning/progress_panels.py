"""What layers above learning add to a learner's progress page.

As quiz.learning.home_panels does for the home page: learning cannot import
the layers above it (assignments and quizzes live in teaching), so they
register a panel here from their AppConfig.ready() (quiz.teaching.hooks): a
callable `(user=) -> dict | None`, the dict holding the `template` to
include and its context. The progress page includes each panel that
answers ("My grades").
"""

from __future__ import annotations

from collections.abc import Callable

_panels: list[Callable[..., dict | None]] = []


def progress_panel_register(panel: Callable[..., dict | None]) -> None:
    if panel not in _panels:
        _panels.append(panel)


def progress_panels(*, user) -> list[dict]:
    if not user.is_authenticated:
        return []
    return [shown for panel in _panels if (shown := panel(user=user))]
