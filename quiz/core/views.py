"""Sign-up (a new learner account, logged straight in) and the account page
(the API tokens of each client, revoked one by one)."""

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from quiz.core.accounts import user_signup
from quiz.core.api import tokens
from quiz.core.forms import SignupForm
from quiz.core.models import ApiToken


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


@login_required
def account(request):
    """The signed-in person's account: their API tokens, one per client."""
    rows = tokens.token_list(user=request.user)
    for token in rows:
        token.expires_at = tokens.token_expires_at(token)
    return render(request, "registration/account.html", {"tokens": rows})


@login_required
@require_POST
def account_token_revoke(request, token_id: int):
    """Log one client out (the form's CSRF token proves it was this page)."""
    try:
        token = tokens.token_revoke_by_id(user=request.user, token_id=token_id)
    except ApiToken.DoesNotExist:
        raise Http404("You have no such token.") from None
    messages.success(request, f"Revoked the token “{token.name}”.")
    return redirect("account")
