"""A figure the prose quotes is one the lesson's own doctests print (issue 28).

docs/content-format.md asks that every number in the prose appear in a
doctest's output. The doctests themselves run in test_doctests.py; this file
checks the other half: that the prose repeats what they print. It reads each
lesson's prose (body outside code fences, takeaway, follow-ups, self-checks)
and the output lines of its doctests, and checks three kinds of figure that
drifted before: a decimal count with a unit ("159.7M", "1.24B"), a decimal
percentage ("0.79%"), and an approximate figure ("a little under 10").
A "Suppose" marks a made-up team in a real-life example as a scenario, and a
few claims whose wording a number check cannot read are pinned to the
output they restate.
"""

from __future__ import annotations

import re

import pytest

from quiz.content.tree import read_content_tree
from tests.conftest import PROJECT_ROOT
from tests.content.test_doctests import doctest_blocks

TREE = read_content_tree(PROJECT_ROOT / "content")
LESSONS = [pytest.param(lesson, id=lesson.slug) for lesson in TREE.lessons]
BY_FILE = {lesson.path.name.split("-", 1)[0]: lesson for lesson in TREE.lessons}

_FENCE = re.compile(r"```.*?```", re.S)
# "159.7M", "1.24 B", "3.10 GB" is left to the byte tables (printed as GB).
UNIT_FIGURE = re.compile(r"(?<![\w.,])(\d[\d,]*\.\d+)\s?([MB])\b(?!\w)")
PERCENT_FIGURE = re.compile(r"(?<![\w.,])(\d+\.\d+)%")
APPROXIMATE = re.compile(
    r"\b(?:a little|just|slightly|a bit) (under|over|below|above|more than|"
    r"less than) (\d[\d,]*(?:\.\d+)?)"
)
# A printed number may be the count itself or already in the prose's unit;
# a percentage may be printed as a fraction (0.255) or as a percent (25.5).
SCALES = {"M": (1e6, 1), "B": (1e9, 1), "%": (0.01, 1)}
# (lesson file prefix, prose figure) that no doctest of the lesson prints,
# each for a reason: quoted from a named source, or a step the text explains.
QUOTED = {
    ("03", "2.8B"),  # Pythia model names
    ("03", "6.9B"),
    ("16", "0.1%"),  # printed as 100.1% of 4d^2
    ("37", "5.3%"),  # printed as the norm ratio 1.053
    ("42", "6.7B"),  # Dettmers et al. (2022)
    ("46", "46.2%"),  # PaLM's reported MFU and HFU (Chowdhery et al., 2022)
    ("46", "57.8%"),
    ("47", "8.03B"),  # Llama 3 model card
    ("48", "0.44B"),  # Qwen3 model cards
    ("48", "6.95B"),
    ("48", "340.0M"),  # a self-check's arithmetic at d = 1,536
    ("48", "18.4%"),
    ("56", "124.4M"),  # GPT-2 small's count, derived in parameter-formula
    ("59", "0.1%"),  # Adam's beta2 = 0.999 as a per-step weight
}


def prose(lesson) -> str:
    """What a learner reads as text: code fences left out."""
    parts = [lesson.takeaway, _FENCE.sub("", lesson.body)]
    for item in lesson.follow_ups:
        parts += [str(item["question"]), str(item["answer"])]
    for question in lesson.questions:
        parts += [str(v) for k, v in question.items() if k != "kind"]
    return "\n".join(parts)


def printed(lesson) -> str:
    """Every output line of the lesson's doctests (not the >>> lines)."""
    lines = []
    for _, code, _ in doctest_blocks(lesson.body):
        for line in code.splitlines():
            stripped = line.strip()
            if stripped and not stripped.startswith((">>>", "...")):
                lines.append(stripped)
    return "\n".join(lines)


def printed_numbers(output: str) -> list[float]:
    """Each number in the output: 159741952, 159,741,952, 2.33e+11, 0.255."""
    joined = re.sub(r"(?<=\d)[,_](?=\d{3}(?!\d))", "", output)
    return [
        float(n) for n in re.findall(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e[+-]?\d+)?", joined)
    ]


def decimals(figure: str) -> int:
    return len(figure.split(".")[1]) if "." in figure else 0


def is_printed(number: str, scales, output: str, as_text: str = "") -> bool:
    """The figure is in the output as text, or the number is a rounding of a
    printed number at its own precision (read in units of one of `scales`)."""
    if re.search(rf"(?<![\w.]){re.escape(as_text or number)}(?![\w.]*\d)", output):
        return True
    value, places = float(number.replace(",", "")), decimals(number)
    return any(
        round(n / scale, places) == value
        for n in printed_numbers(output)
        for scale in scales
    )


def unprinted_figures(lesson) -> list[str]:
    text, output = prose(lesson), printed(lesson)
    prefix = lesson.path.name.split("-", 1)[0]
    figures = [(n, SCALES[unit], n + unit) for n, unit in UNIT_FIGURE.findall(text)]
    figures += [(n, SCALES["%"], n + "%") for n in PERCENT_FIGURE.findall(text)]
    missing = [
        figure
        for number, scale, figure in figures
        if (prefix, figure) not in QUOTED
        and not is_printed(number, scale, output, as_text=figure)
    ]
    for side, number in APPROXIMATE.findall(text):
        if not is_near(number, side in ("under", "below", "less than"), output):
            missing.append(f"{side} {number}")
    return missing


def is_near(number: str, below: bool, output: str) -> bool:
    """'a little under 10': a printed number in [9, 10); 'over': in (10, 11]."""
    x = float(number.replace(",", ""))
    low, high = (0.9 * x, x) if below else (x, 1.1 * x)
    return any(
        low <= n < high if below else low < n <= high for n in printed_numbers(output)
    )


def test_the_check_reads_a_rounding_but_not_a_neighbour():
    output = "(159741952, 60821504, 2.6, '13%')\n['11.35%', '0.79%']\n0.255"
    assert is_printed("159.7", SCALES["M"], output, as_text="159.7M")
    assert not is_printed("159.8", SCALES["M"], output, as_text="159.8M")
    assert is_printed("0.79", SCALES["%"], output, as_text="0.79%")
    assert is_printed("11.3", SCALES["%"], output, as_text="11.3%")
    assert is_printed("25.5", SCALES["%"], output)
    assert not is_printed("25.6", SCALES["%"], output)
    assert is_near("2.7", below=True, output=output)
    assert not is_near("2.6", below=True, output=output)
    assert not is_printed("0.7", SCALES["%"], output, as_text="0.7%")


@pytest.mark.parametrize("lesson", LESSONS)
def test_prose_figures_are_printed_by_the_lessons_doctests(lesson):
    assert unprinted_figures(lesson) == [], (
        f"{lesson.path.name}: these figures in the prose are printed by none of "
        "its doctests; quote what a doctest prints, or print the figure"
    )


# A made-up team in "A real-life example" is introduced with "Suppose", as
# the lessons' examples are; a documented case names its source instead
# ("The BigScience team behind BLOOM (Le Scao et al., 2022)"), and a later
# paragraph of a scenario says "the team".
_ACTOR = re.compile(
    r"^(?:A|An|One)\s[\w -]{0,40}?\b(?:team|group|lab|company|startup|"
    r"engineer|researcher|student)s?\b",
    re.I,
)


def real_life_paragraphs(lesson) -> list[str]:
    section = re.search(
        r"^## A real-life example\n(.*?)(?=^## |\Z)", lesson.body, re.S | re.M
    )
    if not section:
        return []
    text = _FENCE.sub("", section.group(1))
    return [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]


@pytest.mark.parametrize("lesson", LESSONS)
def test_a_made_up_example_is_marked_as_a_scenario(lesson):
    told_as_fact = [p[:60] for p in real_life_paragraphs(lesson) if _ACTOR.match(p)]
    assert told_as_fact == [], (
        f"{lesson.path.name}: a real-life example introduces its people as fact; "
        "start a made-up one with 'Suppose'"
    )


# Claims a figure check cannot read (a ratio in words, which stage differs),
# each pinned to the doctest output that shows it: (lesson file prefix, a
# regex the prose must match, text the doctests must print).
CLAIMS = [
    ("42", r"fp32's range at about a third of its precision", "[24, 8]"),
    ("42", r"per-row error only moves from 0\.77% to 0\.79%", "['11.35%', '0.79%']"),
    ("47", r"approach 2,? 63B", ""),  # both from the paper, not computed
    (
        "60",
        r"embeddings and block 0 match\s+exactly and the first stage that differs is"
        r"\s+the last",
        "[('embedding', 0.0), ('h.0.mlp', 0.0), ('ln_f', 1.15)]",
    ),
]


@pytest.mark.parametrize(("prefix", "claim", "output"), CLAIMS)
def test_a_pinned_claim_matches_its_doctest(prefix, claim, output):
    lesson = BY_FILE[prefix]
    assert output in printed(lesson), (
        f"{lesson.path.name}: doctest no longer prints {output}"
    )
    assert re.search(claim, prose(lesson)), f"{lesson.path.name}: prose lacks {claim!r}"


# What those claims said before the doctests were read: (prefix, regex).
RETRACTED = [
    ("42", r"a quarter of its precision"),
    ("42", r"per-row error stays at"),
    ("47", r"approaches 1 and 2, whose projection for that\s+budget is 67B"),
    ("60", r"(?:difference|differs)[^.]*?after block 1's attention"),
]


@pytest.mark.parametrize(("prefix", "wrong"), RETRACTED)
def test_a_retracted_claim_stays_out(prefix, wrong):
    lesson = BY_FILE[prefix]
    assert not re.search(wrong, prose(lesson)), f"{lesson.path.name}: {wrong!r}"
