"""Instructor pages (/instructor/…) and learners joining (/cohorts/join/…),
included at the site root from config/urls.py."""

from django.urls import include, path

from teaching import exercise_regrade, views
from teaching.assignments import views as assignment_views
from teaching.matrix import views as matrix_views

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
    path(
        "instructor/cohorts/<int:cohort_id>/gradebook/",
        assignment_views.gradebook_view,
        name="instructor-gradebook",
    ),
    path(
        "instructor/cohorts/<int:cohort_id>/gradebook-<str:shape>.csv",
        assignment_views.gradebook_csv_view,
        name="instructor-gradebook-csv",
    ),
    path(
        "instructor/cohorts/<int:cohort_id>/assignments/new/",
        assignment_views.assignment_new,
        name="instructor-assignment-new",
    ),
    path(
        "instructor/assignments/<int:assignment_id>/",
        assignment_views.assignment_detail,
        name="instructor-assignment",
    ),
    path(
        "instructor/assignments/<int:assignment_id>/edit/",
        assignment_views.assignment_edit,
        name="instructor-assignment-edit",
    ),
    path(
        "instructor/assignments/<int:assignment_id>/archive/",
        assignment_views.assignment_archive,
        name="instructor-assignment-archive",
    ),
    path(
        "instructor/assignments/<int:assignment_id>/delete/",
        assignment_views.assignment_delete,
        name="instructor-assignment-delete",
    ),
    path(
        "instructor/assignments/<int:assignment_id>/extensions/",
        assignment_views.extension_view,
        name="instructor-assignment-extension",
    ),
    path(
        "instructor/assignments/<int:assignment_id>/learners/<int:user_id>/",
        assignment_views.assignment_learner,
        name="instructor-assignment-learner",
    ),
    path(
        "instructor/assignments/<int:assignment_id>/learners/<int:user_id>/override/",
        assignment_views.override_view,
        name="instructor-assignment-override",
    ),
    path(
        "instructor/cohorts/<int:cohort_id>/regrade/",
        exercise_regrade.regrade_start_view,
        name="instructor-regrade-start",
    ),
    path(
        "instructor/regrades/<int:regrade_id>/",
        exercise_regrade.regrade_view,
        name="instructor-regrade",
    ),
    path("cohorts/join/", views.join_form, name="cohort-join-form"),
    path("cohorts/join/<str:code>/", views.join, name="cohort-join"),
    path("", include("teaching.quizzes.urls")),
]

# Quizzes: the instructor's pages (teaching.quizzes.instructor_urls).
urlpatterns += [path("", include("teaching.quizzes.instructor_urls"))]
