"""Who reaches the instructor tools, pages and API alike.

Only instructors and superusers get in (others: the log-in page or a 403). A
cohort that is not the caller's, or a learner who is not in it, is a 404 so
that nobody can probe which ids exist.
"""

from __future__ import annotations

from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import Http404
from drf_spectacular.utils import OpenApiResponse
from rest_framework.exceptions import NotFound
from rest_framework.permissions import BasePermission, IsAuthenticated

from quiz.core.api.base import ApiView
from quiz.core.api.scopes import TEACH
from quiz.core.params import id_in_range
from teaching import selectors as sel
from teaching.models import Cohort, CohortMembership


def instructor_required(view):
    """Anonymous: the login page. Signed in but not an instructor: 403."""

    @wraps(view)
    def wrapped(request, *args, **kwargs):
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not sel.user_can_teach(request.user):
            raise PermissionDenied("Only instructors can open this page.")
        return view(request, *args, **kwargs)

    return wrapped


def cohort_or_404(request, cohort_id) -> Cohort:
    if not id_in_range(cohort_id):  # past bigint: no such row, not a DataError
        raise Http404("No such cohort.")
    try:
        return sel.cohort_get(user=request.user, cohort_id=cohort_id)
    except Cohort.DoesNotExist:
        raise Http404("No such cohort.") from None


def member_read_or_404(read, *, cohort: Cohort, user_id: int):
    """`read(cohort=, user_id=)` for a member of `cohort`; a 404 for anyone else."""
    try:
        if not id_in_range(user_id):
            raise CohortMembership.DoesNotExist
        return read(cohort=cohort, user_id=user_id)
    except CohortMembership.DoesNotExist:
        raise Http404("No such learner in this cohort.") from None


class IsInstructor(BasePermission):
    message = "Only instructors can use the cohort API."

    def has_permission(self, request, view) -> bool:
        return sel.user_can_teach(request.user)


class CohortApiView(ApiView):
    permission_classes = [IsAuthenticated, IsInstructor]
    token_scopes = TEACH  # every view of an instructor's cohort

    def cohort(self, request, cohort_id) -> Cohort:
        try:
            return sel.cohort_get(user=request.user, cohort_id=cohort_id)
        except Cohort.DoesNotExist:
            raise NotFound("No such cohort.") from None


COHORT_API_ERRORS = {
    403: OpenApiResponse(description="Not an instructor"),
    404: OpenApiResponse(description="Not one of your cohorts"),
}
