"""Learner routes, included at the site root from config/urls.py."""

from django.urls import path

from quiz.learning import views as learner_views

urlpatterns = [
    path("", learner_views.home, name="home"),
    path("lessons/<slug:slug>/", learner_views.lesson_detail, name="lesson"),
    path(
        "lessons/<slug:slug>/questions/<int:question_id>/answer/",
        learner_views.question_answer,
        name="question-answer",
    ),
    path(
        "lessons/<slug:slug>/follow-ups/<int:follow_up_id>/rate/",
        learner_views.follow_up_rate,
        name="follow-up-rate",
    ),
    path("review/", learner_views.review_page, name="review"),
    path("review/<int:card_id>/rate/", learner_views.review_rate, name="review-rate"),
    path("progress/", learner_views.progress_page, name="progress"),
    path("progress/export.json", learner_views.progress_export, name="progress-export"),
]
