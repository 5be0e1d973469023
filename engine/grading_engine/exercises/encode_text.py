"""encode-text: text to GPT-2 token ids with tiktoken's "gpt2" encoding.

The child has tiktoken and the GPT-2 vocabulary offline (TIKTOKEN_CACHE_DIR).
Hidden cases mix emoji, accents, CJK, digits and odd whitespace, drawn per
attempt, so only a real byte-level BPE gets them all right.
"""

from __future__ import annotations

import os
import random
import unicodedata

from grading_engine.checks.int_lists import read_int_list, unreadable
from grading_engine.checks.result import CheckResult, fail
from grading_engine.exercises.kit.cases import new_case
from grading_engine.expected import expectation
from grading_engine.harness.capture import capture_int_list
from grading_engine.reference.tokenizer import get_encoding

SLUG = "encode-text"
ENTRY_POINT = "encode"
SIGNATURE = "encode(text: str) -> list[int]"

_FIXED_HIDDEN = (
    "  two leading spaces and a trailing one ",
    "naïve café, déjà vu",
    "emoji 🙂🚀 and a family 👩‍👩‍👧",
    "日本語のテキスト",
    "tabs\tand\nnew lines\n\n\nand more",
    "it's, we've, they'll: contractions",
    "numbers 12345 3.14159 and 1,000,000",
    "",
)
_WORDS = (
    "the", "sky", "is", "blue", "token", "embedding", "GPT", "attention",
    "café", "Zürich", "naïve", "über", "東京", "données", "привет", "λόγος",
    "🙂", "🚀", "🤖", "✨", "42", "3.14", "1e-5", "don't", "I'm", "x=y+1",
)  # fmt: skip
_GAPS = (" ", " ", " ", "  ", "\t", "\n", "\n\n", " \n", "   ")


def preload() -> None:
    """Warm tiktoken's registry so a learner's get_encoding("gpt2") is instant."""
    if os.environ.get("TIKTOKEN_CACHE_DIR"):
        import tiktoken

        tiktoken.get_encoding("gpt2")


def _random_text(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randint(3, 12)):
        word = rng.choice(_WORDS)
        parts.append(word.capitalize() if rng.random() < 0.2 else word)
        parts.append(rng.choice(_GAPS))
    text = "".join(parts)
    return text if rng.random() < 0.5 else text.strip()


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        new_case('"The sky is"', False, text="The sky is"),
        new_case('"I ate an"', False, text="I ate an"),
    ]
    cases += [
        new_case(f"hidden text {i + 1}", True, text=text)
        for i, text in enumerate(_FIXED_HIDDEN)
    ]
    cases += [
        new_case(f"random text {i + 1}", True, text=_random_text(rng)) for i in range(4)
    ]
    return cases


def run_case(fn, case: dict):
    return {"result": capture_int_list(fn(case["text"]))}, {}


# -- parent -------------------------------------------------------------------


def _token(enc, token_id) -> str:
    if type(token_id) is not int:
        return f"{token_id!r} (not an int)"
    try:
        piece = enc.decode_single_token_bytes(token_id)
    except Exception:  # noqa: BLE001 - out-of-range ids are the learner's
        return f"{token_id} (not a GPT-2 id)"
    try:
        shown = repr(piece.decode("utf-8"))
    except UnicodeDecodeError:
        shown = repr(piece)  # part of a multi-byte character
    return f"{token_id} {shown}"


def _show(enc, ids: list, limit: int = 24) -> str:
    pieces = [_token(enc, i) for i in ids[:limit]]
    more = f" ... ({len(ids) - limit:,} more)" if len(ids) > limit else ""
    return "[" + " | ".join(pieces) + more + "]"


@expectation
def encodings(case: dict) -> dict:
    """The text's ids, and the ids of the usual slips (shipped for the
    visible cases)."""
    enc, text = get_encoding(), case["text"]
    ids = enc.encode(text)
    return {
        "ids": ids,
        "split-words": [i for word in text.split() for i in enc.encode(word)],
        "stripped-whitespace": enc.encode(text.strip()),
        "collapsed-whitespace": enc.encode(" ".join(text.split())),
        "added-endoftext": [
            [enc.eot_token, *ids],
            [*ids, enc.eot_token],
        ],
        # each line encoded apart: without its newline, or with it but cut
        # off from the whitespace and text it would merge with
        "encoded-by-line": [
            [i for line in text.splitlines(keepends=keep) for i in enc.encode(line)]
            for keep in (False, True)
        ],
        # a space put in front (where the text starts with one, adding it
        # only when missing is the answer)
        "prepended-space": enc.encode(" " + text),
        # non-ASCII characters removed (accents with their letters, or the
        # letters kept after an NFKD decomposition)
        "dropped-non-ascii": [
            enc.encode(_ascii_only(text)),
            enc.encode(_ascii_only(unicodedata.normalize("NFKD", text))),
        ],
        "eot": enc.eot_token,
    }


def _ascii_only(text: str) -> str:
    return text.encode("ascii", errors="ignore").decode("ascii")


def _usual_slip(known: dict, text: str, got: list):
    if got == list(text.encode("utf-8")):
        return "utf8-bytes", (
            "those are the text's UTF-8 bytes; BPE merges bytes into tokens, "
            "use tiktoken.get_encoding('gpt2').encode(text)"
        )
    if got == [ord(ch) for ch in text]:
        return "code-points", (
            "those are Unicode code points (ord), not GPT-2 token ids"
        )
    if got == known["split-words"]:
        return "split-words", (
            "encoding word by word drops the spaces: GPT-2 keeps a word's "
            "leading space inside its token (' sky' is 6766), so encode the "
            "whole text at once"
        )
    if got == known["stripped-whitespace"]:
        return "stripped-whitespace", (
            "leading and trailing whitespace are tokens too: do not strip the text"
        )
    if got == known["collapsed-whitespace"]:
        return "collapsed-whitespace", (
            "those are the ids of the text with its whitespace collapsed to "
            "single spaces: tabs, new lines and runs of spaces are tokens of "
            "their own, so encode the text exactly as given"
        )
    eot = known["eot"]
    if got in known["added-endoftext"]:
        return "added-endoftext", (
            f"you added the <|endoftext|> token ({eot}): it separates documents "
            "in training data, but encoding a text returns that text's tokens "
            "only"
        )
    return None, ""


# Hints of the slips that can give another slip's ids on some text (encoding
# line by line gives the stripped text's ids when the only newlines lead or
# trail), so _diagnose names them only where no other slip gives the answer.
_MORE_HINTS = {
    "by-line-dropped": (
        "those are the ids of each line encoded on its own: splitting into "
        "lines drops the newline characters, which are tokens too ('\\n' "
        "is 198, '\\n\\n' is 628). Encode the whole text in one call"
    ),
    "by-line-kept": (
        "those are the ids of each line encoded on its own, newline kept: "
        "BPE merges across line ends ('\\n\\n' is one token, 628), so "
        "encode the whole text in one call"
    ),
    "prepended-space": (
        "those are the ids of the text with a space put in front: a word "
        "carries a leading space only where the text has one (' sky' in "
        "'The sky'), so 'The sky is' starts with 'The', 464. Encode the "
        "text exactly as given"
    ),
    "dropped-non-ascii": (
        "those are the ids of the text with its non-ASCII characters "
        "removed: GPT-2's BPE works on UTF-8 bytes, so accents, emoji and "
        "CJK encode without errors, as tokens of their own. Keep every "
        "character"
    ),
}


def _more_slips(known: dict, got: list) -> list[tuple[str, str]]:
    dropped, kept = known["encoded-by-line"]
    rows = [
        ("encoded-by-line", [dropped], _MORE_HINTS["by-line-dropped"]),
        ("encoded-by-line", [kept], _MORE_HINTS["by-line-kept"]),
        ("prepended-space", [known["prepended-space"]], None),
        ("dropped-non-ascii", known["dropped-non-ascii"], None),
    ]
    return [
        (diagnosis, hint or _MORE_HINTS[diagnosis])
        for diagnosis, values, hint in rows
        if got in values
    ]


def _diagnose(known: dict, text: str, got: list):
    """The slip `got` is, if it is one. An answer that two slips give on
    this text is a tie, and neither is named on this case."""
    found = [_usual_slip(known, text, got)]
    found = [slip for slip in found if slip[0]] + _more_slips(known, got)
    if len({diagnosis for diagnosis, _ in found}) != 1:
        return None, ""
    return found[0]


def _form_problem(name, read, expected_shown, hidden) -> CheckResult | None:
    """A failed check when the answer is not a list of plain ints."""
    if read.not_a_list:
        shown, kind = read.not_a_list
        return fail(
            name,
            f"expected a list of ints, got {shown} of type {kind}",
            expected=expected_shown,
            got=f"{shown} ({kind})",
            diagnosis="not-a-list",
            hidden=hidden,
        )
    if read.unreadable:
        return unreadable(name)
    if read.bad_item:
        bad = read.bad_item
        return fail(
            name,
            f"every id must be a plain int; got {bad.get('repr')} of type "
            f"{bad.get('type')}",
            expected="list[int]",
            got=f"a list holding {bad.get('type')}",
            diagnosis="not-an-int",
            hidden=hidden,
        )
    return None


def check_case(case: dict, data: dict, tensors: dict) -> list[CheckResult]:
    enc = get_encoding()
    text, hidden = case["text"], case["hidden"]
    name = f"{case['name']}: token ids"
    known = encodings(case)
    expected = known["ids"]
    read = read_int_list(data.get("result"))
    if problem := _form_problem(name, read, _show(enc, expected), hidden):
        return [problem]
    got = read.values if read.complete else read.values + ["..."]  # cut short
    if got == expected:
        return [CheckResult(name, True, f"{len(got)} ids, all right", hidden=hidden)]
    diagnosis, hint = _diagnose(known, text, got)
    first = next(
        (k for k, (a, b) in enumerate(zip(expected, got, strict=False)) if a != b),
        min(len(expected), len(got)),
    )
    message = (
        f"for {text!r} the ids differ from position {first}"
        f" (expected {len(expected)} ids, got {len(got)})"
    )
    if hint:
        message += f": {hint}"
    message += f"\n\nexpected {_show(enc, expected)}\ngot      {_show(enc, got)}"
    return [
        fail(
            name,
            message,
            expected=str(expected)[:500],
            got=str(got)[:500],
            diagnosis=diagnosis,
            hidden=hidden,
        )
    ]
