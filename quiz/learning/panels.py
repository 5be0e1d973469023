"""What layers above learning add to a learner's home and progress pages.

Learning cannot import the layers above it (assignments and quizzes live in
teaching), so each page reads its panels from a setting: HOME_PANELS ("Your
assignments", then "Your quizzes") and PROGRESS_PANELS ("My grades"), dotted
paths to Panels (quiz.core.providers). The page includes, in the setting's
order, each panel that answers; with none named it shows none.
"""

from __future__ import annotations

from typing import Protocol

from quiz.core.providers import providers


class Panel(Protocol):
    """A panel for `user`: the `template` to include and its context, or None."""

    def __call__(self, *, user) -> dict | None: ...


def home_panels(*, user) -> list[dict]:
    return _shown("HOME_PANELS", user=user)


def progress_panels(*, user) -> list[dict]:
    return _shown("PROGRESS_PANELS", user=user)


def _shown(setting: str, *, user) -> list[dict]:
    if not user.is_authenticated:
        return []
    panels: tuple[Panel, ...] = providers(setting)
    return [shown for panel in panels if (shown := panel(user=user))]
