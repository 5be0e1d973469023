"""The LTI endpoints: /lti/login/, /lti/launch/, /lti/jwks/, /lti/deep-link/.

The platform posts to login and launch from its own site (no CSRF cookie,
perhaps inside an iframe): both are CSRF-exempt and framable, and are
guarded by OIDC's state and nonce and the id_token's signature instead.
Deep linking carries the verified launch's id in the page (an iframe may
have no cookies) and spends it once.
"""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.core.cache import cache
from django.db import transaction
from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.clickjacking import xframe_options_exempt
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from lti_tool.models import Key
from pylti1p3.contrib.django import DjangoOIDCLogin
from pylti1p3.exception import LtiException, OIDCException

from lms import courses, tool
from lms.launches import launch_accept
from lms.linking import deep_link_resources, deep_link_response_jwt
from lms.models import LmsCourse
from lms.targets import pickable, target_url
from lms.tasks import sync_roster
from lms.tool import LaunchRefused
from quiz.core.csp import policy_header
from teaching.access import instructor_required

log = logging.getLogger(__name__)
DEEP_LINK_DONE = "lms-deep-link-done-"
DL_SETTINGS = "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"
PRESENTATION = "https://purl.imsglobal.org/spec/lti/claim/launch_presentation"
CONTEXT = "https://purl.imsglobal.org/spec/lti/claim/context"


def refused(request, exc: LaunchRefused) -> HttpResponse:
    """The 4xx page. Framable by anyone: the LMS that framed the launch may not
    be registered, and the page offers nothing to click."""
    log.info("LTI request refused: %s (%s)", exc.message, exc.detail)
    response = render(
        request,
        "lms/error.html",
        {"message": exc.message, "detail": exc.detail},
        status=exc.status,
    )
    response["Content-Security-Policy"] = policy_header(frame_ancestors="*")
    return response


@csrf_exempt
@xframe_options_exempt
@require_http_methods(["GET", "POST"])
def oidc_login(request):
    """Third-party login initiation: redirect to the platform with state and nonce."""
    params = request.POST if request.method == "POST" else request.GET
    for needed in ("iss", "login_hint", "target_link_uri"):
        if not params.get(needed):
            return refused(
                request,
                LaunchRefused(f"The login request is missing `{needed}`."),
            )
    tool.tool_key()
    oidc = DjangoOIDCLogin(
        request, tool.ToolConfig(), launch_data_storage=tool.storage()
    )
    try:
        return oidc.redirect(request.build_absolute_uri(reverse("lti-launch")))
    except (OIDCException, LtiException) as exc:
        return refused(request, tool.refusal(exc))


@csrf_exempt
@xframe_options_exempt
@require_POST
def launch(request):
    """A resource link or deep linking request: verify, sign in, land."""
    try:
        with transaction.atomic():
            result = launch_accept(request)
    except LaunchRefused as exc:
        return refused(request, exc)
    login(request, result.user, backend="django.contrib.auth.backends.ModelBackend")
    if result.roster_course_id is not None:
        try:
            sync_roster.apply_async(
                args=[result.roster_course_id], queue=settings.CELERY_TASK_DEFAULT_QUEUE
            )
        except Exception:  # noqa: BLE001 - the launch stands; "Sync roster now" remains
            log.exception(
                "could not queue the roster sync of course %s", result.roster_course_id
            )
    if result.deep_link:
        return redirect(f"{reverse('lti-deep-link')}?launch={result.launch_id}")
    return redirect(target_url(result.target, teaching=result.teaching))


@require_GET
def jwks(request):
    """The tool's public keys, for platforms to check what it signs."""
    tool.tool_key()
    return JsonResponse(Key.objects.as_jwks())


def _framable_policy(message_launch) -> str:
    """This site's policy, but framable by (and posting to) the platform.

    The LMS page that frames the picker is often not the issuer's host (a
    school's own Canvas domain), so the launch's return URLs count too.
    """
    registration = message_launch.get_tool_conf().registration
    data = message_launch.get_launch_data()
    dl_settings = data.get(DL_SETTINGS) or {}
    presentation = data.get(PRESENTATION) or {}
    urls = (
        registration.issuer,
        registration.auth_url,
        dl_settings.get("deep_link_return_url"),
        presentation.get("return_url"),
    )
    origins = {_origin(url) for url in urls if _origin(url)}
    allowed = " ".join(["'self'", *sorted(origins)])
    return policy_header(frame_ancestors=allowed, form_action=allowed)


def _origin(url: str) -> str:
    parts = urlsplit(str(url or ""))
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return ""
    return f"{parts.scheme}://{parts.netloc}"


@csrf_exempt  # the launch id, verified and single-use, is the credential
@xframe_options_exempt
@require_http_methods(["GET", "POST"])
def deep_link(request):
    """The picker: an instructor chooses what becomes links in the LMS course."""
    launch_id = (request.POST if request.method == "POST" else request.GET).get(
        "launch", ""
    )
    message_launch = tool.launch_restore(request, launch_id)
    if message_launch is None or not message_launch.is_deep_link_launch():
        return refused(
            request,
            LaunchRefused(
                'This page opens from your course\'s "add content" menu; start '
                "there again.",
                status=404 if request.method == "GET" else 400,
            ),
        )
    if cache.get(DEEP_LINK_DONE + launch_id):
        return refused(
            request,
            LaunchRefused("These links were already sent to your course."),
        )
    data = message_launch.get_launch_data()
    settings_claim = data[DL_SETTINGS]
    cohort_id = _cohort_of(data)
    multiple = settings_claim.get("accept_multiple", True) is not False
    error = ""
    if request.method == "POST":
        chosen = request.POST.getlist("resource")
        try:
            resources = deep_link_resources(
                request, chosen, cohort_id=cohort_id, multiple=multiple
            )
        except ValueError as exc:
            error = str(exc)
        else:
            if not cache.add(DEEP_LINK_DONE + launch_id, True, 3600):
                return refused(
                    request,
                    LaunchRefused("These links were already sent to your course."),
                )
            response = render(
                request,
                "lms/deep_link_return.html",
                {
                    "return_url": settings_claim["deep_link_return_url"],
                    "jwt": deep_link_response_jwt(message_launch, resources),
                    "count": len(resources),
                },
            )
            response["Content-Security-Policy"] = _framable_policy(message_launch)
            return response
    response = render(
        request,
        "lms/deep_link.html",
        {
            "launch_id": launch_id,
            "groups": pickable(cohort_id=cohort_id),
            "multiple": multiple,
            "course_title": (data.get(CONTEXT) or {}).get("title", ""),
            "error": error,
        },
        status=400 if error else 200,
    )
    response["Content-Security-Policy"] = _framable_policy(message_launch)
    return response


def _cohort_of(data: dict) -> int | None:
    """The cohort of the launch's course, once an instructor launched it."""
    course = LmsCourse.objects.filter(
        context__id_on_platform=(data.get(CONTEXT) or {}).get("id", ""),
        context__deployment__deployment_id=data.get(
            "https://purl.imsglobal.org/spec/lti/claim/deployment_id"
        ),
        context__deployment__registration__issuer=data.get("iss"),
    ).first()
    return course.cohort_id if course else None


@instructor_required
@require_GET
def course_list(request):
    """The instructor's LMS courses: roster and grade sync at a glance."""
    rows = courses.courses_status(user=request.user)
    return render(request, "lms/courses.html", {"rows": rows})


@instructor_required
@require_POST
def roster_sync(request, course_id: int):
    course = get_object_or_404(courses.courses_taught(user=request.user), pk=course_id)
    try:
        count = courses.roster_sync(course)
    except courses.RosterError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(
            request, f"Roster synced: the LMS lists {count} people in this course."
        )
    return redirect("lti-courses")
