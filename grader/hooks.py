"""What grader plugs into the layers below it, which may not import it.

Called once from GraderConfig.ready(): the content tree's exercise files are
checked against their harnesses and stored as Exercise rows, and a learner's
submissions count in their progress.
"""

from __future__ import annotations

from grader.exercise_content import exercise_records, exercise_upsert
from grader.learner_progress import EXERCISE_PROGRESS
from grader.verify import exercise_options_problems
from quiz.content.exercise_store import ExerciseStore, exercise_store_register
from quiz.learning.exercise_progress import exercise_progress_register


def connect() -> None:
    exercise_store_register(
        ExerciseStore(
            options_problems=exercise_options_problems,
            upsert=exercise_upsert,
            records=exercise_records,
        )
    )
    exercise_progress_register(EXERCISE_PROGRESS)
