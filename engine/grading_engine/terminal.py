"""Learner text made safe to print on a terminal.

A learner's output can hold escape sequences (OSC 52 writes the clipboard,
others retitle the window or redraw lines) and lines that look like a
verdict. Text mode of `manage.py grade` shows such text escaped and fenced.
"""

from __future__ import annotations

import unicodedata

# Bidirectional overrides and isolates reorder what a line appears to say.
_BIDI = {chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))}
_KEEP = {"\n", "\t"}


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def terminal_escape(text: str) -> str:
    """Every control character (Unicode Cc) but newline and tab as \\xNN.

    ESC (\\x1b) and the C1 CSI (\\x9b) are Cc, so no escape sequence survives;
    \\r cannot rewrite a line either. Bidi controls are shown as \\uNNNN.
    """
    return "".join(
        _escape(c)
        if (c not in _KEEP and unicodedata.category(c) == "Cc") or c in _BIDI
        else c
        for c in text
    )


def fenced(text: str, *, prefix: str = "  | ") -> str:
    """Escaped `text` with every line behind `prefix`, so none can pass for ours."""
    lines = terminal_escape(text).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return "\n".join(prefix + line for line in lines)
