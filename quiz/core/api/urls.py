"""The API's own routes (tokens), included at /api/v1/ from config/urls.py."""

from django.urls import path

from quiz.core.api import views

urlpatterns = [
    path("auth/token/", views.TokenView.as_view(), name="api-token"),
    path("auth/tokens/", views.TokenListView.as_view(), name="api-tokens"),
    path(
        "auth/tokens/<int:token_id>/",
        views.TokenDetailView.as_view(),
        name="api-token-detail",
    ),
]
