"""Exercise and submission pages, included at the site root."""

from django.urls import path

from grader import views

urlpatterns = [
    path("exercises/", views.exercise_index, name="exercise-index"),
    path("exercises/<slug:slug>/", views.exercise_detail, name="exercise"),
    path(
        "submissions/<uuid:submission_id>/",
        views.submission_detail,
        name="submission",
    ),
    path(
        "submissions/<uuid:submission_id>/cancel/",
        views.submission_cancel,
        name="submission-cancel",
    ),
]
