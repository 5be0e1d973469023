"""The quiz app's models, defined in its layers and re-exported for Django."""

from quiz.content.models import (
    Diagnosis,
    Figure,
    FollowUp,
    Lesson,
    Question,
    QuestionTemplate,
    QuizQuestion,
    Section,
)
from quiz.core.models import ApiToken, AuditEntry
from quiz.learning.models import LessonRead, QuestionAttempt, ReviewCard, ReviewLog

__all__ = [
    "ApiToken",
    "AuditEntry",
    "Diagnosis",
    "Figure",
    "FollowUp",
    "Lesson",
    "LessonRead",
    "Question",
    "QuestionTemplate",
    "QuizQuestion",
    "QuestionAttempt",
    "ReviewCard",
    "ReviewLog",
    "Section",
]
