"""The middleware that puts the site's Content-Security-Policy (quiz.core.csp)
on every HTML response that has none of its own."""

from __future__ import annotations

from quiz.core.csp import HEADER


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        content_type = response.get("Content-Type", "")
        if content_type.startswith("text/html") and (
            "Content-Security-Policy" not in response
        ):
            response["Content-Security-Policy"] = HEADER
        return response
