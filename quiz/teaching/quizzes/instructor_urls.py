"""Instructor pages for quizzes, included from quiz.teaching.urls."""

from django.urls import path

from quiz.teaching.quizzes import instructor_views as views

urlpatterns = [
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
