"""What the service hands a learner's client: its wheels and local-check data.

`make client` (python -m grading_engine.learner_edition) builds them into
CLIENT_DIST_DIR: the learner edition of the grading engine and the `course`
client as wheels, one local-check bundle per harness (the visible cases and
the values the server's expectations computed for them) and a manifest.
Nothing there is a solution: the learner edition holds no reference code,
hidden case or quiz key (docs/client.md), so the wheels are served to
anyone (`/client/`), and a bundle to a learner who may open its exercise
(the API).
"""

from __future__ import annotations

import json
from pathlib import Path

from django.conf import settings
from grading_engine import __version__ as ENGINE_VERSION

MANIFEST = "manifest.json"


def _root() -> Path:
    return Path(settings.CLIENT_DIST_DIR)


def manifest() -> dict | None:
    """The built manifest for this engine version, or None (not built, or
    built by another engine version)."""
    try:
        data = json.loads((_root() / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("engine") != ENGINE_VERSION:
        return None
    return data


def wheels() -> list[str]:
    """The wheels' file names, the engine's first (pip installs them together)."""
    found = (manifest() or {}).get("wheels")
    if not isinstance(found, list):
        return []
    return [name for name in found if isinstance(name, str) and name.endswith(".whl")]


def wheel_path(name: str) -> Path | None:
    """A served wheel's file, only for a name the manifest lists."""
    if name not in wheels():
        return None
    path = _root() / name
    return path if path.is_file() else None


def bundle(harness: str) -> dict | None:
    """{"path", "sha256", "bytes"} of a harness's local-check bundle, or None."""
    checks = (manifest() or {}).get("checks")
    entry = checks.get(harness) if isinstance(checks, dict) else None
    if not isinstance(entry, dict) or not isinstance(entry.get("file"), str):
        return None
    path = (_root() / entry["file"]).resolve()
    if _root().resolve() not in path.parents or not path.is_file():
        return None
    return {"path": path, "sha256": entry.get("sha256"), "bytes": entry.get("bytes")}


def install_command(base_url: str) -> str | None:
    """`pip install` of the served wheels, by their URLs under `base_url`
    (the site's root, ending in /); None when they were not built."""
    names = wheels()
    if not names:
        return None
    return "pip install " + " ".join(f"{base_url}client/{name}" for name in names)
