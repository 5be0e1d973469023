"""Cohort API routes, included at /api/v1/ from config/urls.py."""

from django.urls import path

from quiz.teaching import api as views
from quiz.teaching.matrix.api import CohortMatrixView

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
]
