"""Cohort API routes, included at /api/v1/ from config/urls.py."""

from django.urls import path

from quiz.teaching import api as views
from quiz.teaching import exercise_regrade
from quiz.teaching.assignments import api as assignments
from quiz.teaching.matrix.api import CohortMatrixView
from quiz.teaching.quizzes import api as quizzes

urlpatterns = [
    path("cohorts/", views.CohortListView.as_view(), name="api-cohorts"),
    path(
        "cohorts/<int:cohort_id>/matrix/",
        CohortMatrixView.as_view(),
        name="api-cohort-matrix",
    ),
    path(
        "cohorts/<int:cohort_id>/submissions/",
        views.CohortSubmissionsView.as_view(),
        name="api-cohort-submissions",
    ),
    path(
        "cohorts/<int:cohort_id>/analytics/",
        views.CohortAnalyticsView.as_view(),
        name="api-cohort-analytics",
    ),
    path(
        "cohorts/<int:cohort_id>/assignments/",
        assignments.CohortAssignmentsView.as_view(),
        name="api-cohort-assignments",
    ),
    path(
        "assignments/<int:assignment_id>/",
        assignments.AssignmentView.as_view(),
        name="api-assignment",
    ),
    path(
        "assignments/<int:assignment_id>/gradebook/",
        assignments.AssignmentGradebookView.as_view(),
        name="api-assignment-gradebook",
    ),
    path(
        "assignments/<int:assignment_id>/extensions/",
        assignments.AssignmentExtensionsView.as_view(),
        name="api-assignment-extensions",
    ),
    path(
        "exercises/<slug:slug>/regrade/",
        exercise_regrade.RegradeStartView.as_view(),
        name="api-exercise-regrade",
    ),
    path(
        "regrades/<int:regrade_id>/",
        exercise_regrade.RegradeDetailView.as_view(),
        name="api-regrade",
    ),
    path(
        "assignments/<int:assignment_id>/overrides/",
        assignments.AssignmentOverridesView.as_view(),
        name="api-assignment-overrides",
    ),
    path(
        "cohorts/<int:cohort_id>/quizzes/",
        quizzes.CohortQuizzesView.as_view(),
        name="api-cohort-quizzes",
    ),
    path("quizzes/<int:quiz_id>/", quizzes.QuizView.as_view(), name="api-quiz"),
    path(
        "quizzes/<int:quiz_id>/attempts/",
        quizzes.QuizAttemptsView.as_view(),
        name="api-quiz-attempts",
    ),
    path(
        "quizzes/<int:quiz_id>/results/",
        quizzes.QuizResultsView.as_view(),
        name="api-quiz-results",
    ),
    path(
        "quizzes/<int:quiz_id>/accommodations/",
        quizzes.QuizAccommodationsView.as_view(),
        name="api-quiz-accommodations",
    ),
    path(
        "quizzes/<int:quiz_id>/statistics/",
        quizzes.QuizStatisticsView.as_view(),
        name="api-quiz-statistics",
    ),
    path(
        "quizzes/<int:quiz_id>/regrade/",
        quizzes.QuizRegradeView.as_view(),
        name="api-quiz-regrade",
    ),
    path(
        "quizzes/<int:quiz_id>/close/",
        quizzes.QuizCloseView.as_view(),
        name="api-quiz-close",
    ),
    path(
        "quizzes/<int:quiz_id>/reopen/",
        quizzes.QuizReopenView.as_view(),
        name="api-quiz-reopen",
    ),
    path(
        "quizzes/<int:quiz_id>/questions/",
        quizzes.QuizQuestionsView.as_view(),
        name="api-quiz-questions",
    ),
    path(
        "quizzes/<int:quiz_id>/questions/regrade/",
        quizzes.QuizQuestionRegradeView.as_view(),
        name="api-quiz-question-regrade",
    ),
    path("quiz-bank/", quizzes.QuizBankView.as_view(), name="api-quiz-bank"),
    path(
        "attempts/<int:attempt_id>/",
        quizzes.AttemptView.as_view(),
        name="api-quiz-attempt",
    ),
    path(
        "attempts/<int:attempt_id>/review/",
        quizzes.AttemptReviewView.as_view(),
        name="api-quiz-attempt-review",
    ),
    path(
        "attempts/<int:attempt_id>/overrides/",
        quizzes.AttemptOverridesView.as_view(),
        name="api-quiz-attempt-overrides",
    ),
    path(
        "attempts/<int:attempt_id>/submit/",
        quizzes.AttemptSubmitView.as_view(),
        name="api-quiz-attempt-submit",
    ),
]
