"""What the client keeps on the learner's machine, in their config directory.

`credentials.json` (the server's URL, the username and the API token) is
written mode 0600 in a 0700 directory, by an atomic replace, and never
printed. Fetched exercises (with their local-check bundles) and the
diagnoses list sit beside it, so `course check` works offline once `course
get` has run.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

from course.errors import CourseError

SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


def config_dir() -> Path:
    """COURSE_CONFIG_DIR, else the platform's per-user config directory."""
    explicit = os.environ.get("COURSE_CONFIG_DIR")
    if explicit:
        return Path(explicit)
    if sys.platform == "win32" and os.environ.get("APPDATA"):
        return Path(os.environ["APPDATA"]) / "course"
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base) / "course"


def _private_dir(path: Path) -> Path:
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(path, 0o700)
    except OSError as exc:
        raise CourseError(f"cannot use the directory {path}: {exc.strerror}") from None
    return path


def _write_private(path: Path, data: dict | bytes) -> None:
    """Write JSON (or bytes) readable by its owner alone; a reader sees old or
    new, whole."""
    _private_dir(path.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        if isinstance(data, bytes):
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
        else:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(data, handle, indent=1)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise CourseError(f"cannot write {path}: {exc.strerror}") from None


def _read(path: Path) -> dict | list | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, UnicodeDecodeError):
        raise CourseError(
            f"{path} is unreadable or damaged; delete it and run the command again"
        ) from None


def credentials_path() -> Path:
    return config_dir() / "credentials.json"


def credentials_save(*, url: str, username: str, token: str, expires_at) -> Path:
    path = credentials_path()
    _write_private(
        path,
        {"url": url, "username": username, "token": token, "expires_at": expires_at},
    )
    return path


def credentials_load() -> dict | None:
    data = _read(credentials_path())
    if data is None:
        return None
    if not isinstance(data, dict) or not all(
        isinstance(data.get(key), str) for key in ("url", "token")
    ):
        raise CourseError(
            f"{credentials_path()} is damaged; run `course login URL` again"
        )
    return data


def credentials_forget() -> bool:
    try:
        credentials_path().unlink()
    except FileNotFoundError:
        return False
    return True


def _exercise_path(slug: str) -> Path:
    if not SLUG.match(slug):
        raise CourseError(f"{slug!r} is not an exercise slug (like tie-weights)")
    return config_dir() / "exercises" / f"{slug}.json"


def exercise_save(exercise: dict) -> None:
    _write_private(_exercise_path(exercise["slug"]), exercise)


def exercise_load(slug: str) -> dict | None:
    data = _read(_exercise_path(slug))
    if data is not None and not (
        isinstance(data, dict) and data.get("slug") == slug and data.get("harness")
    ):
        raise CourseError(
            f"the saved copy of {slug} is damaged; run `course get {slug}` again"
        )
    return data


def local_check_save(slug: str, blob: bytes) -> None:
    """An exercise's local-check bundle (its visible cases and the values the
    server computed for them), beside the exercise."""
    _write_private(_exercise_path(slug).with_suffix(".check"), blob)


def local_check_load(slug: str) -> bytes | None:
    try:
        return _exercise_path(slug).with_suffix(".check").read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise CourseError(
            f"cannot read the local check of {slug}: {exc.strerror}"
        ) from None


def diagnoses_save(diagnoses: list) -> None:
    _write_private(config_dir() / "diagnoses.json", {"diagnoses": diagnoses})


def diagnoses_load() -> dict[str, dict]:
    """Saved diagnoses by slug; empty when never fetched (hints are optional)."""
    try:
        data = _read(config_dir() / "diagnoses.json")
    except CourseError:
        return {}
    items = data.get("diagnoses") if isinstance(data, dict) else None
    return {
        item["slug"]: item
        for item in items or []
        if isinstance(item, dict) and isinstance(item.get("slug"), str)
    }
