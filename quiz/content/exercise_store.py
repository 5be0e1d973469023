"""Where the exercise files of the content tree are checked, stored and read back.

Exercises are content files (content/exercises/*.yaml, parsed with the rest
of the tree) but grader rows: their table and their harnesses belong to the
submissions layer, above this one. So content never imports them. Grader's
AppConfig.ready() registers an ExerciseStore here, and the tree parser, the
loader and the export call it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class ExerciseStore:
    # Why an exercise file's `options` cannot go with its harness (none: fine).
    options_problems: Callable[..., list[str]]  # (harness=, options=)
    # Create or update the row of one parsed file: created/updated/unchanged.
    upsert: Callable[..., str]  # (record=, source_path=)
    # Every stored exercise as a quiz.content.tree.ExerciseRecord, by slug
    # (for the export).
    records: Callable[[], list]


_store: ExerciseStore | None = None


def exercise_store_register(store: ExerciseStore) -> None:
    global _store
    _store = store


def exercise_store() -> ExerciseStore:
    if _store is None:
        raise RuntimeError(
            "no exercise store is registered: the grader app (INSTALLED_APPS) "
            "registers one when Django starts"
        )
    return _store
