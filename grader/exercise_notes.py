"""What layers above the grader add to an exercise's page (its due dates).

Assignments live in the teaching layer, which the grader may not import; it
registers a callable `(user=, exercise=) -> list[dict]` here from its
AppConfig.ready(), and the exercise page shows what each returns.
"""

from __future__ import annotations

from collections.abc import Callable

_sources: list[Callable[..., list[dict]]] = []


def exercise_note_register(source: Callable[..., list[dict]]) -> None:
    if source not in _sources:
        _sources.append(source)


def exercise_notes(*, user, exercise) -> list[dict]:
    if not user.is_authenticated:
        return []
    return [
        note for source in _sources for note in source(user=user, exercise=exercise)
    ]
