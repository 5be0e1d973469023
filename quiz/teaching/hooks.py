"""What teaching plugs into the grader below it: instructors see the
submissions of the learners in their cohorts. Called from QuizConfig.ready()."""

from __future__ import annotations

from grader.selectors import submission_viewer_scope_register
from quiz.teaching.selectors import learners_taught_by


def connect() -> None:
    submission_viewer_scope_register(learners_taught_by)
