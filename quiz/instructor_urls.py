"""Instructor pages, included at /instructor/ from config/urls.py."""

from django.urls import path

from quiz import instructor_views as views

urlpatterns = [
    path("", views.cohort_list, name="instructor-cohorts"),
    path("cohorts/<int:cohort_id>/", views.cohort_detail, name="instructor-cohort"),
    path(
        "cohorts/<int:cohort_id>/learners/<int:user_id>/",
        views.learner_detail,
        name="instructor-learner",
    ),
    path(
        "cohorts/<int:cohort_id>/learners/<int:user_id>/remove/",
        views.member_remove_view,
        name="instructor-member-remove",
    ),
    path(
        "cohorts/<int:cohort_id>/analytics/",
        views.cohort_analytics_view,
        name="instructor-analytics",
    ),
    path(
        "cohorts/<int:cohort_id>/progress.csv",
        views.matrix_csv_view,
        name="instructor-matrix-csv",
    ),
    path(
        "cohorts/<int:cohort_id>/submissions.csv",
        views.submissions_csv_view,
        name="instructor-submissions-csv",
    ),
]
