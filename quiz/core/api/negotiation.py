"""Content negotiation in which `?format=` beats the Accept header.

DRF's default narrows the renderers to the one `?format=` names and then
still matches them against Accept, so a script that always sends
`Accept: application/json` (or a browser's list) gets 406 for
`?format=csv`. A format in the URL is a request for that file by name;
Accept decides only when there is none.
"""

from __future__ import annotations

from django.http import Http404
from rest_framework.exceptions import NotFound
from rest_framework.negotiation import DefaultContentNegotiation


class FormatFirstNegotiation(DefaultContentNegotiation):
    def select_renderer(self, request, renderers, format_suffix=None):
        fmt = format_suffix or request.query_params.get(
            self.settings.URL_FORMAT_OVERRIDE
        )
        if fmt:
            try:
                renderer = self.filter_renderers(renderers, fmt)[0]
            except Http404:
                known = ", ".join(r.format for r in renderers)
                raise NotFound(f"Unknown format {fmt!r}: use one of {known}.") from None
            return renderer, renderer.media_type
        return super().select_renderer(request, renderers, format_suffix)
