"""Where the exercise files of the content tree are checked, stored and read back.

Exercises are content files (content/exercises/*.yaml, parsed with the rest
of the tree) but grader rows: their table and their harnesses belong to the
submissions layer, above this one. So content never imports them. The
grader provides an ExerciseStore, named by dotted path in
settings.EXERCISE_STORE (quiz.core.providers), and the tree parser, the
loader and the export call it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from quiz.core.providers import provider


@dataclass(frozen=True)
class ExerciseStore:
    # Why an exercise file's `options` cannot go with its harness (none: fine).
    options_problems: Callable[..., list[str]]  # (harness=, options=)
    # (field, why) for each reason a parsed file's declaration cannot be
    # graded with its harness, solution and wrong solutions (none: fine).
    declaration_problems: Callable[..., list[tuple[str, str]]]  # (record=)
    # Create or update the row of one parsed file: created/updated/unchanged.
    upsert: Callable[..., str]  # (record=, source_path=)
    # Every stored exercise as a quiz.content.tree.ExerciseRecord, by slug
    # (for the export).
    records: Callable[[], list]


def exercise_store() -> ExerciseStore:
    store = provider("EXERCISE_STORE")
    if store is None:
        raise RuntimeError(
            "no exercise store is set: settings.EXERCISE_STORE names the "
            "grader's (grader.exercise_content.EXERCISE_STORE)"
        )
    return store
