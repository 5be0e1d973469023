"""Self-checks over the whole course: no answer cues, no repeats (issue 20).

Every lesson is read through the project's own parser (read_content_tree),
so these rules see exactly what the site loads.

Answer cues, over all multiple-choice questions of the course:
- Position spread. For each option index k, the share of questions whose
  correct option sits at k is counted among the questions that HAVE an
  option k (a 3-option question cannot put its answer at index 3, so it is
  left out of that denominator). Each share must lie in [15%, 40%]. The
  same bounds apply to "the last option", whatever the option count, so a
  course cannot hide its answers away from the end of short lists either.
- Length. The correct option may be the uniquely longest option in at
  most 25% of the questions (a tie for longest does not count).

Repeats:
- No two self-checks have the same prompt, compared after lowercasing,
  collapsing whitespace, dropping thousands separators and punctuation.
- No numeric answer appears in two lessons of the same section.
- Across sections, two numeric self-checks with the same answer must not
  also ask nearly the same thing (difflib ratio of the normalised prompts
  of 0.75 or more): the medium-block count in lessons 26 and 41, or the 48
  transposed tensors in lessons 30 and 60, were such pairs.
"""

from __future__ import annotations

import difflib
import itertools
import re
from collections import Counter, defaultdict

from quiz.content.tree import read_content_tree
from tests.conftest import PROJECT_ROOT

TREE = read_content_tree(PROJECT_ROOT / "content")
LOW, HIGH = 0.15, 0.40
MAX_LONGEST = 0.25
NEAR_DUPLICATE = 0.75


def _questions(kind: str) -> list[tuple[str, dict]]:
    return [
        (f"{lesson.order:02d}-Q{number}", question)
        for lesson in TREE.lessons
        for number, question in enumerate(lesson.questions, 1)
        if question["kind"] == kind
    ]


CHOICES = _questions("choice")


def _normalise(prompt: str) -> str:
    text = re.sub(r"(?<=\d),(?=\d{3})", "", prompt.lower())
    return " ".join(re.sub(r"[^\w\s.]+", " ", text).split())


def test_the_course_has_choice_questions_to_judge():
    assert len(CHOICES) >= 40


def test_correct_option_position_is_spread():
    at, offered = Counter(), Counter()
    last = 0
    for _, question in CHOICES:
        n = len(question["choices"])
        offered.update(range(n))
        at[question["answer"]] += 1
        last += question["answer"] == n - 1
    shares = {f"index {k}": at[k] / offered[k] for k in sorted(offered)}
    shares["last option"] = last / len(CHOICES)
    bad = {k: f"{v:.0%}" for k, v in shares.items() if not LOW <= v <= HIGH}
    assert not bad, f"correct-option position outside [15%, 40%]: {bad}"


def test_correct_option_is_rarely_the_uniquely_longest():
    longest = []
    for label, question in CHOICES:
        lengths = [len(str(c)) for c in question["choices"]]
        own = lengths[question["answer"]]
        if own == max(lengths) and lengths.count(own) == 1:
            longest.append(label)
    share = len(longest) / len(CHOICES)
    assert share <= MAX_LONGEST, (
        f"the correct option is the uniquely longest in {len(longest)} of "
        f"{len(CHOICES)} questions ({share:.0%}): {longest}"
    )


def test_no_two_self_checks_share_a_prompt():
    seen = defaultdict(list)
    for lesson in TREE.lessons:
        for number, question in enumerate(lesson.questions, 1):
            seen[_normalise(question["prompt"])].append(f"{lesson.order:02d}-Q{number}")
    repeats = [labels for labels in seen.values() if len(labels) > 1]
    assert not repeats, f"self-checks with the same prompt: {repeats}"


def test_no_numeric_answer_repeats_within_a_section():
    answers = defaultdict(lambda: defaultdict(set))
    for lesson in TREE.lessons:
        for question in lesson.questions:
            if question["kind"] == "numeric":
                answers[lesson.section][float(question["answer"])].add(lesson.order)
    repeats = [
        (section, value, sorted(orders))
        for section, values in answers.items()
        for value, orders in values.items()
        if len(orders) > 1
    ]
    assert not repeats, f"one numeric answer in two lessons of a section: {repeats}"


def test_no_near_duplicate_numeric_self_checks_across_lessons():
    numeric = _questions("numeric")
    pairs = []
    for (a, qa), (b, qb) in itertools.combinations(numeric, 2):
        if a[:2] == b[:2] or float(qa["answer"]) != float(qb["answer"]):
            continue
        ratio = difflib.SequenceMatcher(
            None, _normalise(qa["prompt"]), _normalise(qb["prompt"])
        ).ratio()
        if ratio >= NEAR_DUPLICATE:
            pairs.append((a, b, round(ratio, 2)))
    assert not pairs, f"the same numeric self-check asked twice: {pairs}"
