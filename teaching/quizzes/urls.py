"""Learner pages for quizzes, included at the site root from teaching/urls.py."""

from django.urls import path

from teaching.quizzes import views

urlpatterns = [
    path("quizzes/<int:quiz_id>/", views.quiz_intro, name="quiz"),
    path("quizzes/<int:quiz_id>/start/", views.quiz_start, name="quiz-start"),
    path(
        "quizzes/attempts/<int:attempt_id>/",
        views.quiz_attempt,
        name="quiz-attempt",
    ),
    path(
        "quizzes/attempts/<int:attempt_id>/summary/",
        views.quiz_attempt_summary,
        name="quiz-attempt-summary",
    ),
]
