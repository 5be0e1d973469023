"""Token scopes (issue 43): what an API token may do, declared by each view.

A token holds one or more scopes, chosen when it is issued (POST
/api/v1/auth/token/ with `"scopes": [...]`, `learn` when none is named):

- `learn`: the caller's own exercises, submissions, quizzes and attempts;
- `teach`: everything instructor-only (cohorts, assignments, quiz
  management, gradebook, results, reviews, regrades, quiz previews, other
  learners' submissions);
- `manage-tokens`: listing and revoking the user's tokens.

A scope never adds to what the account may do: a learner's `teach` token
reaches no instructor view. Every API view (quiz.core.api.base.ApiView)
declares `token_scopes`, for all its methods or per method (a dict keyed by
the upper-case method): a scope, a tuple of scopes of which any one will
do, or ANY_TOKEN for an operation on the calling token itself (logging it
out). ApiView.check_permissions calls token_scope_check after the view's own
permissions, so this is the one place a token is refused for its scopes: a
403 naming the scope. A view that declares nothing refuses every token (it
is open to browser sessions only), and tests/quiz/test_token_scopes.py
walks the URL configuration and the schema so that none is left undeclared.
A view whose answer depends on who the caller is to the object (a quiz it
teaches, someone else's submission) asks token_scope_require once it knows.

A browser session (Django's log-in) is the whole account: scopes do not
bound it.
"""

from __future__ import annotations

from collections.abc import Iterable

from rest_framework.exceptions import PermissionDenied

from quiz.core.models import ApiToken, default_token_scopes

LEARN = ApiToken.Scope.LEARN.value
TEACH = ApiToken.Scope.TEACH.value
MANAGE_TOKENS = ApiToken.Scope.MANAGE_TOKENS.value
SCOPES = (LEARN, TEACH, MANAGE_TOKENS)
# Any valid token, whatever its scopes: only for acting on that token itself.
ANY_TOKEN = "any-token"  # noqa: S105 (a marker, not a secret)
# Methods that read no data of the user's: no scope is needed for them.
FREE_METHODS = ("OPTIONS",)


class ScopeMissing(PermissionDenied):
    default_code = "token_scope"


def scopes_clean(scopes: Iterable[str] | None) -> list[str]:
    """Known scopes in their canonical order, once each; the default
    (ApiToken's, `learn`) for None. ValueError for an unknown one or none."""
    if scopes is None:
        return default_token_scopes()
    wanted = list(scopes)
    unknown = [scope for scope in wanted if scope not in SCOPES]
    if unknown or not wanted:
        what = f"Unknown scope {unknown[0]!r}" if unknown else "No scope"
        raise ValueError(f"{what}: choose from {', '.join(SCOPES)}.")
    return [scope for scope in SCOPES if scope in wanted]


def declared(view, method: str) -> tuple[str, ...] | None:
    """The scopes of which `view` needs one for `method`; () when any token
    will do; None when the view declares nothing for it."""
    method = method.upper()
    if method in FREE_METHODS:
        return ()
    spec = getattr(view, "token_scopes", None)
    if isinstance(spec, dict):
        spec = spec.get(method, spec.get("GET") if method == "HEAD" else None)
    if spec is None:
        return None
    if spec == ANY_TOKEN:
        return ()
    needed = (spec,) if isinstance(spec, str) else tuple(spec)
    unknown = set(needed) - set(SCOPES)
    if not needed or unknown:
        raise ValueError(f"{view!r} declares unknown token scopes {needed!r}")
    return needed


def request_token(request) -> ApiToken | None:
    """The token the request authenticated with; None for a browser session."""
    return request.auth if isinstance(request.auth, ApiToken) else None


def token_allows(request, scope: str) -> bool:
    """Whether the request may act with `scope`: a session always may."""
    token = request_token(request)
    return token is None or scope in (token.scopes or ())


def refusal(needed: tuple[str, ...], request) -> ScopeMissing:
    names = " or ".join(f"'{scope}'" for scope in needed)
    plural = "scope" if len(needed) == 1 else "scopes"
    return ScopeMissing(
        {
            "detail": f"This token lacks the {names} {plural} that "
            f"{request.method} {request.path} needs. Get a token with it "
            f'(POST /api/v1/auth/token/ with "scopes": ["{needed[0]}"]), or '
            "use the site signed in.",
            "scopes_needed": list(needed),
        }
    )


def token_scope_require(request, *needed: str) -> None:
    """A 403 naming the scope unless the request's token holds one of `needed`
    (a session passes): for a view that learns what it needs from the object."""
    if not any(token_allows(request, scope) for scope in needed):
        raise refusal(needed, request)


def token_scope_check(view, request) -> None:
    """Refuse a token request the view's declaration does not let through."""
    token = request_token(request)
    if token is None:
        return
    needed = declared(view, request.method)
    if needed is None:
        raise ScopeMissing(
            f"{request.method} {request.path} takes no API token: "
            "use the site signed in."
        )
    if needed:
        token_scope_require(request, *needed)
