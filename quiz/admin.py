"""Django looks for quiz.admin: it registers the admins of quiz's layers."""

from quiz.content import admin as content_admin  # noqa: F401
from quiz.core import admin as core_admin  # noqa: F401
