"""Sign-up: a new learner account, logged straight in."""

from django.contrib.auth import login
from django.core.exceptions import ValidationError
from django.shortcuts import redirect, render

from quiz.core.accounts import user_signup
from quiz.core.forms import SignupForm


def signup(request):
    if request.user.is_authenticated:
        return redirect("home")
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            user = user_signup(
                username=form.cleaned_data["username"],
                password=form.cleaned_data["password1"],
                email=form.cleaned_data.get("email", ""),
            )
        except ValidationError as refused:
            form.add_error("username", refused)
        else:
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            return redirect("home")
    return render(request, "registration/signup.html", {"form": form})
