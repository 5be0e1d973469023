"""Learners joining a cohort, included at /cohorts/ from config/urls.py."""

from django.urls import path

from quiz import instructor_views as views

urlpatterns = [
    path("join/", views.join_form, name="cohort-join-form"),
    path("join/<str:code>/", views.join, name="cohort-join"),
]
