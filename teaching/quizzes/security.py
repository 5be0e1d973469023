"""Which slots of a held-back quiz are practice, not secure, and why.

A quiz that holds its keys back is only as secure as every other door to
its items (docs/quizzes.md, "What is secure"). Exam mode shuts the doors
while an attempt runs, but some material is public before the quiz starts:
a lesson's self-check answers at once, and an exercise's reference
solution shows after a pass or a few graded attempts. A slot drawing such
material still works, and is marked on the builder, the variants page and
the results so an instructor knows what its score measures. Templates and
quiz-only questions are secure: no page shows their keys before the policy.
"""

from __future__ import annotations

from teaching.quizzes.bank import pool_refs
from teaching.quizzes.models import Quiz, QuizSlot
from teaching.quizzes.policy import HELD_BACK

SELF_CHECKS = (
    "it draws lesson self-checks, whose keys any learner can read on the lesson "
    "page before the quiz"
)
EXERCISES = (
    "it names course exercises, whose reference solution a learner sees after a "
    "pass or a few graded attempts"
)


def practice_words(refs: list[str]) -> str:
    """Why questions drawn from `refs` are public ("" if none is)."""
    reasons = []
    if any(ref.startswith("q:") for ref in refs):
        reasons.append(SELF_CHECKS)
    if any(ref.startswith("x:") for ref in refs):
        reasons.append(EXERCISES)
    return "; ".join(reasons)


def slot_practice(quiz: Quiz, slot: QuizSlot) -> str:
    """Why this slot is practice, not secure ("" if it is secure, or if the
    quiz shows its keys at once anyway)."""
    if quiz.feedback not in HELD_BACK:
        return ""
    return practice_words(pool_refs(slot.pool))
