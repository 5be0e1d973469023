"""The base of every API view: JSON bodies only, bounded in size and depth."""

from __future__ import annotations

from rest_framework.views import APIView

from quiz.core.api.parsers import BoundedJSONParser


class ApiView(APIView):
    parser_classes = [BoundedJSONParser]
