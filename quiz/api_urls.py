"""Routes included from config/urls.py."""

from django.urls import path  # noqa: F401

urlpatterns: list = []
