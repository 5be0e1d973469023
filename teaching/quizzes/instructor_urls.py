"""Instructor pages for quizzes, included from teaching.urls."""

from django.urls import path

from teaching.quizzes import instructor_tools as tools
from teaching.quizzes import instructor_views as views

urlpatterns = [
    path(
        "instructor/cohorts/<int:cohort_id>/quiz-bank/",
        tools.quiz_bank,
        name="instructor-quiz-bank",
    ),
    path(
        "instructor/quizzes/<int:quiz_id>/close/",
        tools.quiz_close,
        name="instructor-quiz-close",
    ),
    path(
        "instructor/quizzes/<int:quiz_id>/reopen/",
        tools.quiz_reopen,
        name="instructor-quiz-reopen",
    ),
    path(
        "instructor/quizzes/<int:quiz_id>/questions/",
        tools.quiz_questions,
        name="instructor-quiz-questions",
    ),
    path(
        "instructor/quizzes/<int:quiz_id>/questions/regrade/",
        tools.quiz_question_regrade,
        name="instructor-quiz-question-regrade",
    ),
    path(
        "instructor/quiz-attempts/<int:attempt_id>/",
        tools.attempt_review,
        name="instructor-quiz-attempt",
    ),
    path(
        "instructor/cohorts/<int:cohort_id>/quizzes/",
        views.quiz_list,
        name="instructor-quizzes",
    ),
    path(
        "instructor/cohorts/<int:cohort_id>/quizzes/new/",
        views.quiz_new,
        name="instructor-quiz-new",
    ),
    path(
        "instructor/quizzes/<int:quiz_id>/", views.quiz_detail, name="instructor-quiz"
    ),
    path(
        "instructor/quizzes/<int:quiz_id>/edit/",
        views.quiz_edit,
        name="instructor-quiz-edit",
    ),
    path(
        "instructor/quizzes/<int:quiz_id>/variants/",
        views.quiz_variants,
        name="instructor-quiz-variants",
    ),
    path(
        "instructor/quizzes/<int:quiz_id>/statistics/",
        views.quiz_statistics,
        name="instructor-quiz-statistics",
    ),
    path(
        "instructor/quizzes/<int:quiz_id>/regrade/",
        views.quiz_regrade,
        name="instructor-quiz-regrade-start",
    ),
    path(
        "instructor/quizzes/<int:quiz_id>/accommodations/",
        views.quiz_accommodation,
        name="instructor-quiz-accommodation",
    ),
    path(
        "instructor/quiz-regrades/<int:regrade_id>/",
        views.quiz_regrade_report,
        name="instructor-quiz-regrade",
    ),
]
