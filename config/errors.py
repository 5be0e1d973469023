"""Site-wide 400/403/404/500 handlers: JSON under /api/, pages elsewhere."""

from django.http import JsonResponse
from django.views import defaults


def _is_api(request) -> bool:
    return request.path.startswith("/api/")


def bad_request(request, exception):
    """Django's own 400s (too many fields, a bad Host...) as JSON under /api/."""
    if _is_api(request):
        return JsonResponse({"detail": "Bad request."}, status=400)
    return defaults.bad_request(request, exception)


def permission_denied(request, exception):
    if _is_api(request):
        return JsonResponse(
            {"detail": "You do not have permission to do this."}, status=403
        )
    return defaults.permission_denied(request, exception)


def not_found(request, exception):
    if _is_api(request):
        return JsonResponse({"detail": "Not found."}, status=404)
    return defaults.page_not_found(request, exception)


def server_error(request):
    if _is_api(request):
        return JsonResponse(
            {"detail": "Something went wrong on our side; it has been logged."},
            status=500,
        )
    return defaults.server_error(request)
