"""What layers above the grader add to an exercise's page (its due dates).

Assignments live in the teaching layer, which the grader may not import; it
provides a NoteSource named in settings.EXERCISE_NOTE_SOURCES
(quiz.core.providers), and the exercise page shows what each source returns,
in the setting's order (none named: no notes).
"""

from __future__ import annotations

from typing import Protocol

from quiz.core.providers import providers


class NoteSource(Protocol):
    """The notes for `user` on `exercise`'s page, each a dict for its template."""

    def __call__(self, *, user, exercise) -> list[dict]: ...


def exercise_notes(*, user, exercise) -> list[dict]:
    if not user.is_authenticated:
        return []
    sources: tuple[NoteSource, ...] = providers("EXERCISE_NOTE_SOURCES")
    return [note for source in sources for note in source(user=user, exercise=exercise)]
