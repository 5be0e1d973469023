"""Sign-up: a new learner account, logged straight in."""

from django.contrib.auth import login
from django.core.exceptions import ValidationError
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme

from quiz.core.accounts import user_signup
from quiz.core.forms import SignupForm


def safe_next(request) -> str:
    """The posted or linked `next` when it stays on this site (as the log-in
    view allows it), else ""."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    allowed = url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    return target if allowed else ""


def signup(request):
    """Create the account, log in, and go back where the visitor was."""
    target = safe_next(request)
    if request.user.is_authenticated:
        return redirect(target or "home")
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
            return redirect(target or "home")
    return render(request, "registration/signup.html", {"form": form, "next": target})
