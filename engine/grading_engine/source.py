"""A learner's source file read from disk, or one line saying why it can't be.

`manage.py grade` and the learner client (`course check`, `course submit`)
read files the same way, with the same messages.
"""

from __future__ import annotations

from pathlib import Path

MAX_SOURCE_BYTES = 1024 * 1024


class SourceUnreadable(ValueError):
    """The file cannot be graded as it is; str() is the message to show."""


def read_source(path: str | Path, *, max_bytes: int = MAX_SOURCE_BYTES) -> str:
    path = Path(path)
    try:
        if path.stat().st_size > max_bytes:
            raise SourceUnreadable(f"{path}: larger than {max_bytes:,} bytes")
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise SourceUnreadable(f"{path}: no such file") from None
    except IsADirectoryError:
        raise SourceUnreadable(f"{path}: is a directory, not a file") from None
    except PermissionError:
        raise SourceUnreadable(f"{path}: permission denied") from None
    except UnicodeDecodeError as exc:
        raise SourceUnreadable(f"{path}: not UTF-8 text (byte {exc.start})") from None
