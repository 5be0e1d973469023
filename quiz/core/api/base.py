"""The base of every API view: JSON bodies only, bounded in size and depth,
and a token held to the scope the view declares (quiz.core.api.scopes)."""

from __future__ import annotations

from drf_spectacular.openapi import AutoSchema
from rest_framework.views import APIView

from quiz.core.api import scopes
from quiz.core.api.parsers import BoundedJSONParser


class ScopedAutoSchema(AutoSchema):
    """Each operation names the token scope it needs: `x-token-scopes` (any
    one of them will do; [] for any token) and a line of its description."""

    def get_operation(self, *args, **kwargs):
        operation = super().get_operation(*args, **kwargs)
        if operation is None:
            return None
        needed = scopes.declared(self.view, self.method)
        if needed is None:
            line = "API tokens: refused (a signed-in browser session only)."
        elif needed:
            names = " or ".join(f"`{scope}`" for scope in needed)
            line = f"Token scope: {names}."
        else:
            line = "Token scope: none needed."
        operation["x-token-scopes"] = None if needed is None else list(needed)
        description = operation.get("description", "")
        operation["description"] = f"{description}\n\n{line}".strip()
        return operation


class ApiView(APIView):
    parser_classes = [BoundedJSONParser]
    schema = ScopedAutoSchema()
    # Which token scope each method needs (quiz.core.api.scopes.declared):
    # every view sets it; none refuses every token.
    token_scopes: str | tuple[str, ...] | dict | None = None

    def check_permissions(self, request):
        super().check_permissions(request)
        scopes.token_scope_check(self, request)
