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
from quiz.teaching.models import (
    Assignment,
    AssignmentExtension,
    AssignmentItem,
    Cohort,
    CohortMembership,
    ScoreOverride,
)
from quiz.teaching.quizzes.models import (
    Quiz,
    QuizAccommodation,
    QuizAttempt,
    QuizCodeAnswer,
    QuizItemOverride,
    QuizQuestionChange,
    QuizRegrade,
    QuizRegradeResult,
    QuizSlot,
)

__all__ = [
    "ApiToken",
    "Assignment",
    "AssignmentExtension",
    "AssignmentItem",
    "AuditEntry",
    "Cohort",
    "CohortMembership",
    "Diagnosis",
    "Figure",
    "FollowUp",
    "Lesson",
    "LessonRead",
    "Question",
    "QuestionTemplate",
    "Quiz",
    "QuizAccommodation",
    "QuizAttempt",
    "QuizCodeAnswer",
    "QuizItemOverride",
    "QuizQuestion",
    "QuizQuestionChange",
    "QuizRegrade",
    "QuizRegradeResult",
    "QuizSlot",
    "QuestionAttempt",
    "ReviewCard",
    "ReviewLog",
    "ScoreOverride",
    "Section",
]
