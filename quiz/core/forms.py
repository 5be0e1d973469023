"""The sign-up form; whether a name is available is user_signup's to say."""

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import BaseUserCreationForm


class SignupForm(BaseUserCreationForm):
    """The sign-up form checks the fields' shape and the password only.

    Whether the username can be had (taken, reserved, a look-alike) is
    decided by quiz.core.accounts.user_signup with one generic message, so the
    form must not add Django's "A user with that username already exists."
    """

    email = forms.EmailField(required=False)

    class Meta:
        model = get_user_model()
        fields = ["username", "email"]

    def validate_unique(self):
        """Uniqueness is user_signup's to say, without naming it (see above)."""
