"""Instructor pages (/instructor/…) and learners joining (/cohorts/join/…),
included at the site root from config/urls.py."""

from django.urls import path

from quiz.teaching import views
from quiz.teaching.matrix import views as matrix_views

urlpatterns = [
    path("instructor/", views.cohort_list, name="instructor-cohorts"),
    path(
        "instructor/cohorts/<int:cohort_id>/",
        matrix_views.cohort_detail,
        name="instructor-cohort",
    ),
    path(
        "instructor/cohorts/<int:cohort_id>/learners/<int:user_id>/",
        views.learner_detail,
        name="instructor-learner",
    ),
    path(
        "instructor/cohorts/<int:cohort_id>/learners/<int:user_id>/remove/",
        views.member_remove_view,
        name="instructor-member-remove",
    ),
    path(
        "instructor/cohorts/<int:cohort_id>/analytics/",
        views.cohort_analytics_view,
        name="instructor-analytics",
    ),
    path(
        "instructor/cohorts/<int:cohort_id>/progress.csv",
        matrix_views.matrix_csv_view,
        name="instructor-matrix-csv",
    ),
    path(
        "instructor/cohorts/<int:cohort_id>/submissions.csv",
        views.submissions_csv_view,
        name="instructor-submissions-csv",
    ),
    path("cohorts/join/", views.join_form, name="cohort-join-form"),
    path("cohorts/join/<str:code>/", views.join, name="cohort-join"),
]
