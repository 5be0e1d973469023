"""What layers above learning add to a learner's home page.

Learning cannot import the layers above it (assignments live in teaching),
so they register a panel here from their AppConfig.ready(): a callable
`(user) -> dict | None`, the dict holding the `template` to include and its
context. The home page includes each panel that answers.
"""

from __future__ import annotations

from collections.abc import Callable

_panels: list[Callable[..., dict | None]] = []


def home_panel_register(panel: Callable[..., dict | None]) -> None:
    if panel not in _panels:
        _panels.append(panel)


def home_panels(*, user) -> list[dict]:
    if not user.is_authenticated:
        return []
    return [shown for panel in _panels if (shown := panel(user=user))]
