"""A learner's source file read from disk, or one line saying why it can't be.

`manage.py grade` and the learner client (`course check`, `course submit`)
read files the same way, with the same messages. The server's size limit on
submitted code is stated once, here, so `course check` refuses exactly what
the server would refuse, in the server's words.
"""

from __future__ import annotations

from pathlib import Path

MAX_SOURCE_BYTES = 1024 * 1024


class SourceUnreadable(ValueError):
    """The file cannot be graded as it is; str() is the message to show."""


def code_size(code: str) -> int:
    """The code's size in bytes as the server counts it (UTF-8)."""
    return len(code.encode("utf-8", "surrogatepass"))


def code_size_problem(size: int, limit: int) -> str | None:
    """Why code of `size` bytes is refused under `limit`, or None if it fits."""
    if size <= limit:
        return None
    return f"the code is {size:,} bytes; the limit is {limit:,} bytes"


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
