"""The answers a lower layer asks of a higher one, named in a setting.

A lower layer that needs an answer only a layer above it has (who may view a
submission, which panels a page shows, what exam mode holds shut) owns a
small protocol and reads who provides it from a setting of dotted paths, as
Django reads AUTHENTICATION_BACKENDS: the lower layer never imports the
higher one, and config/settings.py says in one place who answers. A fact
that a lower layer announces is a signal instead (quiz.core.score_events);
docs/architecture.md has the table.

Each list of dotted paths is imported once, on first use. The cache is
keyed by the paths themselves, not by the setting's name, so a test that
changes a setting (override_settings, pytest-django's `settings`, even a
deletion, which sends no setting_changed) gets what it names.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

_loaded: dict[tuple[str, ...], tuple[Any, ...]] = {}


def providers(setting: str) -> tuple[Any, ...]:
    """What the setting names, in its order; none when it is unset or empty."""
    names = getattr(settings, setting, None) or ()
    names = (names,) if isinstance(names, str) else tuple(names)
    loaded = _loaded.get(names)
    if loaded is None:
        loaded = _loaded[names] = tuple(import_string(name) for name in names)
    return loaded


def provider(setting: str) -> Any | None:
    """The one object the setting names, or None when it is unset or empty."""
    loaded = providers(setting)
    if len(loaded) > 1:
        raise ImproperlyConfigured(f"{setting} names one provider, not {len(loaded)}")
    return loaded[0] if loaded else None
