"""The site's URLs plus views whose database fails (tests/test_database_errors.py)."""

from django.db import OperationalError
from django.urls import include, path
from rest_framework.permissions import AllowAny
from rest_framework.views import APIView

from config.urls import handler400, handler403, handler404, handler500  # noqa: F401


def locked_page(request):
    raise OperationalError("database is locked")


def broken_page(request):
    raise ValueError("a bug, not the database")


def fine_page(request):
    from django.http import HttpResponse

    return HttpResponse("fine")


class LockedApi(APIView):
    permission_classes = [AllowAny]

    def post(self, request):
        raise OperationalError("database is locked")


class LockedAfterViewMiddleware:
    """Fails as a session save after the view would, for paths with `after-view`."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if "after-view" in request.path:
            raise OperationalError("database is locked")
        return response


urlpatterns = [
    path("test-db/locked/", locked_page),
    path("test-db/broken/", broken_page),
    path("test-db/after-view/", fine_page),
    path("api/v1/test-db/locked/", LockedApi.as_view()),
    path("api/v1/test-db/after-view/", fine_page),
    path("", include("config.urls")),
]
