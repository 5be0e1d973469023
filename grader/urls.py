"""Exercise and submission pages, included at the site root."""

from django.urls import path

from grader import client_views, views

urlpatterns = [
    path("client/", client_views.client_index, name="client"),
    path("client/<str:filename>", client_views.client_wheel, name="client-wheel"),
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
