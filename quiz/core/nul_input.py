"""A NUL character in the address, the query string or a form answers 400,
naming the field, before the view runs.

PostgreSQL text refuses NUL (U+0000): a view that saved or filtered by such
a value raised DataError, a 500 (a quiz's or an assignment's title, a
learner's name on the reopen form, a comment on a score, a join code, `?q=`
of the question bank, `?exercise=` of a cohort's submissions...). Browsers
never send one; a crafted request can, to any page, so it is refused here
once. A view that answers NUL in its form with its own words (the exercise
page and the quiz attempt page: "the code contains a NUL character", with
the code kept) is marked `nul_judged_by_view` and gets its form as sent.

JSON bodies are not forms: DRF's CharField refuses NUL, and the API's
parser what a serializer cannot see (quiz.core.api.parsers). A lone
surrogate cannot arrive here: Django decodes addresses, query strings and
forms as UTF-8, replacing what is not.
"""

from __future__ import annotations

import json

from django.http import HttpResponseBadRequest, JsonResponse

_SHOWN = 40  # characters of a field's name shown


def nul_judged_by_view(view):
    """Mark a view that refuses NUL in its own form with its own message."""
    view.nul_judged_by_view = True
    return view


def _nul_in(data) -> str | None:
    for name, values in data.lists():
        if "\x00" in name or any("\x00" in value for value in values):
            return name
    return None


def nul_field(request, *, form: bool = True) -> tuple[str, str] | None:
    """Where the first NUL is: ("address", ""), ("query", a field's name) or
    ("form", a field's name); None if there is none."""
    if "\x00" in request.path_info:
        return "address", ""
    if (name := _nul_in(request.GET)) is not None:
        return "query", name
    # Django parses only form bodies into POST (a JSON body stays unread).
    if form and request.method == "POST":
        if (name := _nul_in(request.POST)) is not None:
            return "form", name
    return None


class NulInputMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        own = getattr(view_func, "nul_judged_by_view", False)
        found = nul_field(request, form=not own)
        if found is None:
            return None
        place, field = found
        shown = json.dumps(field if len(field) <= _SHOWN else field[:_SHOWN] + "…")
        where = {
            "address": "The address",
            "query": f"The query string's field {shown}",
            "form": f"The form field {shown}",
        }[place]
        detail = f"{where} holds a NUL character (U+0000), which no text here can hold."
        if not request.path.startswith("/api/"):
            return HttpResponseBadRequest(
                detail, content_type="text/plain; charset=utf-8"
            )
        if place == "address" or "\x00" in field or len(field) > _SHOWN:
            return JsonResponse({"detail": detail}, status=400)
        return JsonResponse({field: [detail]}, status=400)  # a serializer's shape
