"""What teaching plugs into the layers below it: instructors see the
submissions of the learners in their cohorts, and learners see their
assignments and quizzes on the home page and the due date on an exercise's
page; exam mode knows what a learner sitting a quiz may not open. Called from
QuizConfig.ready()."""

from __future__ import annotations

from grader.exercise_notes import exercise_note_register
from grader.selectors import submission_viewer_scope_register
from quiz.core.exam_mode import exam_lock_register
from quiz.learning.home_panels import home_panel_register
from quiz.learning.progress_panels import progress_panel_register
from quiz.teaching.assignments.learner import (
    assignments_panel,
    exercise_due_notes,
    grades_panel,
)
from quiz.teaching.quizzes.exam_mode import exam_lock_for
from quiz.teaching.quizzes.learner import quizzes_panel
from quiz.teaching.selectors import learners_taught_by


def connect() -> None:
    submission_viewer_scope_register(learners_taught_by)
    home_panel_register(assignments_panel)
    home_panel_register(quizzes_panel)
    progress_panel_register(grades_panel)  # "My grades" on the progress page
    exercise_note_register(exercise_due_notes)
    exam_lock_register(exam_lock_for)  # doors shut while a held-back quiz is sat
