"""Exercise and submission API routes, included at /api/v1/ from config/urls.py."""

from django.urls import path

from grader.api import views

urlpatterns = [
    path("exercises/", views.ExerciseListView.as_view(), name="api-exercises"),
    path(
        "exercises/<slug:slug>/",
        views.ExerciseDetailView.as_view(),
        name="api-exercise",
    ),
    path(
        "exercises/<slug:slug>/local-check/",
        views.ExerciseLocalCheckView.as_view(),
        name="api-exercise-local-check",
    ),
    path("diagnoses/", views.DiagnosisListView.as_view(), name="api-diagnoses"),
    path(
        "exercises/<slug:slug>/submissions/",
        views.SubmissionCreateView.as_view(),
        name="api-submission-create",
    ),
    path(
        "submissions/<uuid:submission_id>/",
        views.SubmissionDetailView.as_view(),
        name="api-submission",
    ),
    path(
        "submissions/<uuid:submission_id>/cancel/",
        views.SubmissionCancelView.as_view(),
        name="api-submission-cancel",
    ),
    path(
        "submissions/<uuid:submission_id>/events/",
        views.SubmissionEventsView.as_view(),
        name="api-submission-events",
    ),
    path(
        "submissions/<uuid:submission_id>/gradescope/",
        views.SubmissionGradescopeView.as_view(),
        name="api-submission-gradescope",
    ),
]
