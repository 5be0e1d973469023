"""Shape checks that explain a wrong shape in terms of named axes.

"got (2, 3, 768), expected (2, 3, 50257)" tells a learner little; "the
vocabulary axis is missing: the last axis is n_embd (768)" tells them which
step they skipped. The explanation works by matching each size that came back
against the sizes the exercise knows by name (its axes and its config).
"""

from __future__ import annotations

from grading_engine.checks.result import CheckResult

# How an axis or size name reads in a sentence.
LABELS = {
    "batch": "batch",
    "time": "time",
    "vocab": "vocabulary",
    "vocab_size": "vocabulary",
    "n_embd": "embedding (n_embd)",
    "channels": "embedding (n_embd)",
    "n_head": "head",
    "head_size": "head-size",
    "block_size": "position (block_size)",
    "in": "input-feature",
    "out": "output-feature",
}

_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth")


def label(name: str) -> str:
    return LABELS.get(name, name)


def fmt_shape(shape) -> str:
    shape = tuple(int(s) for s in shape)
    return (
        "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
    )


def _position(i: int, rank: int) -> str:
    if rank > 1 and i == rank - 1:
        return "the last axis"
    return f"the {_ORDINALS[i]} axis" if i < len(_ORDINALS) else f"axis {i}"


def _names_for(size: int, axes, expected, sizes: dict) -> list[str]:
    """Every known name whose size is `size`, axes of the answer first."""
    names = [a for a, s in zip(axes, expected, strict=True) if s == size]
    names += [n for n, s in sizes.items() if s == size and n not in names]
    return names


def _describe(size: int, axes, expected, sizes: dict) -> str:
    names = _names_for(size, axes, expected, sizes)
    if not names:
        return f"a size ({size}) that matches no axis of this exercise"
    return " or ".join(names) + f" ({size})"


def explain_shape(
    got, expected, axes, sizes: dict | None = None
) -> tuple[str, str, str | None]:
    """Say how `got` differs from `expected`.

    Returns (pattern, explanation, diagnosis). `pattern` is a stable key such
    as "replaced:vocab->n_embd", "swapped:batch,time", "missing:batch",
    "unmerged-heads" or "flattened:batch,time" that exercises use to add
    their own hint.
    """
    got, expected = tuple(int(s) for s in got), tuple(int(s) for s in expected)
    axes = tuple(axes)
    sizes = dict(sizes or {})
    if len(axes) != len(expected):
        raise ValueError("axes must name every expected axis")
    found = None
    if len(got) == len(expected):
        found = _same_rank(got, expected, axes, sizes)
    elif len(got) == len(expected) - 1:
        found = _one_axis_fewer(got, expected, axes)
    elif len(got) == len(expected) + 1:
        found = _one_axis_more(got, expected, axes, sizes)
    if found:
        return found
    text = (
        f"got {len(got)} axes, expected {len(expected)} ({', '.join(axes)})"
        if len(got) != len(expected)
        else "the sizes do not match"
    )
    return "rank", text, None


def _same_rank(got, expected, axes, sizes) -> tuple[str, str, str | None]:
    """The same number of axes: reordered, one replaced, or several resized."""
    if sorted(got) == sorted(expected) and got != expected:
        # The same sizes in another order: a transpose or a view in the
        # wrong order.
        return _swapped(got, expected, axes)
    wrong = [i for i in range(len(got)) if got[i] != expected[i]]
    if len(wrong) == 1:
        i = wrong[0]
        name = axes[i]
        others = _names_for(got[i], axes, expected, sizes)
        if others:
            text = (
                f"the {label(name)} axis is missing \u2014 "
                f"{_position(i, len(got))} is "
                f"{_describe(got[i], axes, expected, sizes)}"
            )
            return f"replaced:{name}->{others[0]}", text, None
        text = (
            f"{_position(i, len(got))} ({label(name)}) has size {got[i]}, "
            f"expected {name} = {expected[i]}"
        )
        return f"size:{name}", text, None
    parts = [
        f"{_position(i, len(got))} is {got[i]} instead of {axes[i]} ({expected[i]})"
        for i in wrong
    ]
    return "sizes", "; ".join(parts), None


def _swapped(got, expected, axes) -> tuple[str, str, str]:
    moved = [i for i in range(len(got)) if got[i] != expected[i]]
    names = [axes[i] for i in moved]
    if len(moved) == 2:
        text = (
            f"the {label(names[0])} and {label(names[1])} axes are "
            "swapped: check the order in your view/transpose/permute"
        )
    else:
        order = [_names_for(s, axes, expected, {})[0] for s in got]
        text = (
            f"the axes are in the order ({', '.join(order)}), expected "
            f"({', '.join(axes)}): check your permute/transpose"
        )
    return "swapped:" + ",".join(names), text, "swapped-axes"


def _one_axis_fewer(got, expected, axes) -> tuple[str, str, str] | None:
    """An axis dropped (a [0], a squeeze) or two flattened into one."""
    for i in range(len(expected)):
        if expected[:i] + expected[i + 1 :] == got:
            name = axes[i]
            text = f"the {label(name)} axis ({name} = {expected[i]}) is missing"
            if name == "batch":
                text += (
                    "; keep it even when it is 1 (no [0], no squeeze): "
                    "every step works on (b, t, ...)"
                )
            return f"missing:{name}", text, "missing-axis"
    for i in range(len(expected) - 1):
        merged = expected[:i] + (expected[i] * expected[i + 1],) + expected[i + 2 :]
        if merged == got:
            a, b = axes[i], axes[i + 1]
            text = (
                f"the {label(a)} and {label(b)} axes were flattened into one "
                f"axis of {expected[i]} x {expected[i + 1]} = {got[i]}: "
                f"view it back to {fmt_shape(expected)}"
            )
            return f"flattened:{a},{b}", text, "flattened-axes"
    return None


def _one_axis_more(got, expected, axes, sizes) -> tuple[str, str, str] | None:
    """Heads never merged back, or one axis too many (often of size 1)."""
    unmerged = _unmerged_heads(got, expected, axes, sizes)
    if unmerged:
        return unmerged
    for i in range(len(got)):
        if got[:i] + got[i + 1 :] == expected:
            extra = got[i]
            if extra == 1:
                text = (
                    f"there is an extra axis of size 1 at position {i}: "
                    "a keepdim=True, an unsqueeze or a [None] too many"
                )
                return "extra:1", text, "extra-axis"
            text = (
                f"there is an extra axis of size "
                f"{_describe(extra, axes, expected, sizes)} at position {i}"
            )
            names = _names_for(extra, axes, expected, sizes)
            return f"extra:{names[0] if names else extra}", text, "extra-axis"
    return None


def _unmerged_heads(got, expected, axes, sizes):
    """(b, nh, t, hs) or (b, t, nh, hs) where (b, t, n_embd) was expected."""
    n_head, head_size = sizes.get("n_head"), sizes.get("head_size")
    if not n_head or not head_size or len(expected) != 3 or len(got) != 4:
        return None
    b, t, d = expected
    if n_head * head_size != d:
        return None
    if got == (b, n_head, t, head_size):
        text = (
            "the heads were never merged back: the output is still "
            "(batch, n_head, time, head_size); use "
            "y.transpose(1, 2).contiguous().view(b, t, n_embd)"
        )
        return "unmerged-heads", text, "heads-not-merged"
    if got == (b, t, n_head, head_size):
        text = (
            "the heads were transposed back but not merged: the output is "
            "(batch, time, n_head, head_size); finish with .view(b, t, n_embd)"
        )
        return "unmerged-heads", text, "heads-not-merged"
    return None


def check_shape(
    name: str,
    got_shape,
    expected_shape,
    axes=("batch", "time", "vocab"),
    sizes: dict | None = None,
    *,
    hints: dict[str, tuple[str | None, str]] | None = None,
    hidden: bool = False,
) -> CheckResult:
    """Compare shapes; on a mismatch, explain it by named axes.

    `hints` maps an explanation pattern (see explain_shape) to
    (diagnosis or None, a sentence about the likely cause), e.g.
    {"replaced:vocab->n_embd": ("missing-projection",
    "did you return x instead of x @ weight.T?")}.
    """
    got, expected = tuple(got_shape), tuple(expected_shape)
    got_text, expected_text = fmt_shape(got), fmt_shape(expected)
    if got == expected:
        return CheckResult(
            name=name,
            passed=True,
            message=f"shape {got_text} as expected ({', '.join(axes)})",
            expected=expected_text,
            got=got_text,
            hidden=hidden,
        )
    pattern, explanation, diagnosis = explain_shape(got, expected, axes, sizes)
    hint = (hints or {}).get(pattern)
    if hint is not None:
        hint_diagnosis, sentence = hint
        explanation = f"{explanation}; {sentence}"
        diagnosis = hint_diagnosis or diagnosis
    return CheckResult(
        name=name,
        passed=False,
        message=f"got {got_text}, expected {expected_text}: {explanation}",
        expected=expected_text,
        got=got_text,
        diagnosis=diagnosis,
        hidden=hidden,
    )
