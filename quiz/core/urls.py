"""Account routes (sign-up, log-in, log-out, the account page), at the site root."""

from django.contrib.auth import views as auth_views
from django.urls import path

from quiz.core import views

urlpatterns = [
    path("accounts/", views.account, name="account"),
    path(
        "accounts/tokens/<int:token_id>/revoke/",
        views.account_token_revoke,
        name="account-token-revoke",
    ),
    path("accounts/signup/", views.signup, name="signup"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
]
