"""Serve generated figures as SVG images."""

from django.http import Http404, HttpResponse
from django.utils.http import quote_etag
from django.views.decorators.http import require_safe

from quiz.content.models import Figure

_POLICY = "default-src 'none'; style-src 'unsafe-inline'"


@require_safe
def figure_svg(request, name: str):
    """The stored SVG, cacheable by its source hash.

    The CSP forbids scripts and outside loads, so opening the SVG directly
    (not as an <img>) cannot run anything even if a script were smuggled in.
    """
    figure = Figure.objects.filter(name=name).only("svg", "source_hash").first()
    if figure is None:
        raise Http404("No such figure.")
    etag = quote_etag(figure.source_hash)
    if request.headers.get("If-None-Match") == etag:
        response = HttpResponse(status=304)
    else:
        response = HttpResponse(figure.svg, content_type="image/svg+xml")
    response["ETag"] = etag
    response["Cache-Control"] = "public, max-age=3600"
    response["Content-Security-Policy"] = _POLICY
    response["X-Content-Type-Options"] = "nosniff"
    return response
