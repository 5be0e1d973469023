"""Models of the quiz app, one module per concern."""

from quiz.models.audit import AuditEntry
from quiz.models.cohorts import Cohort, CohortMembership
from quiz.models.content import Figure, FollowUp, Lesson, Question, Section
from quiz.models.progress import LessonRead, QuestionAttempt, ReviewCard, ReviewLog

__all__ = [
    "AuditEntry",
    "Cohort",
    "CohortMembership",
    "Figure",
    "FollowUp",
    "Lesson",
    "LessonRead",
    "Question",
    "QuestionAttempt",
    "ReviewCard",
    "ReviewLog",
    "Section",
]
