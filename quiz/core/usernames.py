"""Usernames that look like another: Unicode skeletons and mixed scripts.

A learner named "аdmin" (Cyrillic а) reads as "admin" on every page that
shows names, so sign-up refuses names that mix scripts and names whose
skeleton (what the name looks like, after NFKC, case folding, stripping
accents and mapping each homoglyph to one prototype, as in Unicode TS #39)
equals a reserved name's or an existing user's. The homoglyph table comes
from the confusable-homoglyphs package (Unicode's confusables.txt).
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from confusable_homoglyphs import confusables

# Names that only staff or the system should appear to have.
RESERVED_NAMES = frozenset(
    {
        "admin",
        "administrator",
        "root",
        "staff",
        "superuser",
        "instructor",
        "teacher",
        "support",
        "help",
        "system",
        "security",
        "moderator",
        "grader",
        "api",
        "null",
        "anonymous",
    }
)


def _rank(glyph: str) -> tuple:
    """Prefer a plain ASCII letter or digit as the prototype of a homoglyph class."""
    return (not glyph.isascii(), not glyph.isalnum(), len(glyph), glyph)


@lru_cache(maxsize=1)
def _prototypes() -> tuple[dict[str, str], dict[str, str]]:
    """Map each glyph to one prototype of its class (classes are the connected
    components of the homoglyph table, so the mapping is transitive)."""
    parent: dict[str, str] = {}

    def find(glyph: str) -> str:
        parent.setdefault(glyph, glyph)
        while parent[glyph] != glyph:
            parent[glyph] = parent[parent[glyph]]
            glyph = parent[glyph]
        return glyph

    for char, homoglyphs in confusables.confusables_data.items():
        for entry in homoglyphs:
            glyph = entry["c"].strip("\u200e\u200f")
            if glyph:
                a, b = find(char), find(glyph)
                if a != b:
                    parent[max(a, b, key=_rank)] = min(a, b, key=_rank)
    singles: dict[str, str] = {}
    for glyph in parent:
        if len(glyph) == 1 and find(glyph) != glyph:
            singles[glyph] = find(glyph)
    # ASCII sequences that read as one letter ("rn" as "m"), keyed by their
    # per-letter skeleton and tried longest first.
    sequences = {
        "".join(singles.get(c, c) for c in glyph): find(glyph)
        for glyph in parent
        if len(glyph) > 1 and glyph.isascii() and find(glyph) != glyph
    }
    ordered = dict(sorted(sequences.items(), key=lambda kv: -len(kv[0])))
    return singles, ordered


def username_skeleton(name: str) -> str:
    """What `name` looks like: equal skeletons mean easily confused names."""
    singles, sequences = _prototypes()
    text = unicodedata.normalize("NFKC", name).casefold()
    text = "".join(
        c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c)
    )
    text = "".join(singles.get(c, c) for c in text)
    for sequence, prototype in sequences.items():
        text = text.replace(sequence, prototype)
    return "".join(singles.get(c, c) for c in text)


def username_mixes_scripts(name: str) -> bool:
    """Letters from more than one script (digits and punctuation are neutral)."""
    return confusables.is_mixed_script(unicodedata.normalize("NFKC", name))


@lru_cache(maxsize=1)
def _reserved_skeletons() -> frozenset[str]:
    return frozenset(username_skeleton(name) for name in RESERVED_NAMES)


def username_is_reserved(name: str) -> bool:
    return username_skeleton(name) in _reserved_skeletons()


def username_collides(name: str, existing) -> bool:
    """Whether `name` looks like one of the `existing` usernames (an iterable)."""
    skeleton = username_skeleton(name)
    return any(username_skeleton(other) == skeleton for other in existing)
