"""Writes for quizzes: create, edit, accommodations, and learners' attempts.

Every client (pages, API, the periodic close) comes through here, so the
rules hold everywhere: the server's clock decides, one attempt in progress,
nothing saved after the deadline, a malformed number never replaces a
saved answer, and an instructor's change is audited.
"""

from __future__ import annotations

import math
import random
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone
from grading_engine.quiz_bank.numbers import NotANumber

from quiz.core.audit import (
    Action,
    audit_changes,
    audit_created,
    audit_record,
    audit_snapshot,
)
from quiz.core.score_events import scores_changed
from teaching.models import CohortMembership
from teaching.quizzes import code
from teaching.quizzes.bank import (
    Bank,
    PoolInvalid,
    clean_number,
    pool_check,
    pool_refs,
)
from teaching.quizzes.models import (
    Quiz,
    QuizAccommodation,
    QuizAttempt,
    QuizSlot,
)
from teaching.quizzes.policy import (
    HELD_BACK,
    attempts_allowed,
    closing_time,
)
from teaching.quizzes.scoring import apply_score, score_items

TITLE_MAX = Quiz._meta.get_field("title").max_length
MAX_SLOTS = 100
MAX_ATTEMPTS = 100
MAX_TIME_LIMIT = 7 * 24 * 60  # minutes
MIN_TIME_LIMIT = 0.5  # minutes: 30 s
MAX_TIME_FACTOR = 10.0
MAX_EXTRA_ATTEMPTS = 20


class QuizError(ValueError):
    """The request cannot be carried out; `field` names what to fix."""

    def __init__(self, message: str, *, field: str = "non_field_errors"):
        super().__init__(message)
        self.field = field


class AttemptClosed(QuizError):
    """The attempt's deadline has passed or it was submitted: a 409."""


class AttemptRefused(QuizError):
    """An attempt cannot start now (not open, closed, none left): a 409."""


@dataclass(frozen=True)
class SlotSpec:
    pool: dict
    points: float = 1.0
    draw: int = 1


# Quizzes ---------------------------------------------------------------------


def _real(value) -> float | None:
    """`value` as a finite float; None for anything else: a bool, text, NaN,
    an infinity, or an int too big for a float (math.isfinite would raise)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        value = float(value)
    except OverflowError:
        return None
    return value if math.isfinite(value) else None


def _check_slots(specs: list[SlotSpec]) -> list[QuizSlot]:
    if not specs:
        raise QuizError("A quiz needs at least one slot.", field="slots")
    if len(specs) > MAX_SLOTS:
        raise QuizError(f"At most {MAX_SLOTS} slots.", field="slots")
    slots = []
    for n, spec in enumerate(specs, start=1):
        try:
            pool = pool_check(spec.pool)
        except PoolInvalid as exc:
            raise QuizError(f"Slot {n}: {exc}", field="slots") from None
        points = _real(spec.points)
        if points is None or not 0 < points <= 1000:
            raise QuizError(
                f"Slot {n}: points is a number from 0 (excluded) to 1000.",
                field="slots",
            )
        size = len(pool_refs(pool))
        draw = spec.draw
        if (
            isinstance(draw, bool)
            or not isinstance(draw, int)
            or not 1 <= draw <= max(size, 1)
        ):
            raise QuizError(
                f"Slot {n}: its pool holds {size} question(s); draw 1 to {size}.",
                field="slots",
            )
        slots.append(QuizSlot(order=n - 1, points=points, draw=draw, pool=pool))
    return slots


def _check_settings(values: dict) -> None:
    title = str(values.get("title", "")).strip()
    if not title or len(title) > TITLE_MAX:
        raise QuizError(f"A title of 1 to {TITLE_MAX} characters.", field="title")
    values["title"] = title
    if values["closes_at"] <= values["opens_at"]:
        raise QuizError("closes_at must be after opens_at.", field="closes_at")
    if values.get("time_limit") is not None:
        limit = _real(values["time_limit"])
        if limit is None or not MIN_TIME_LIMIT <= limit <= MAX_TIME_LIMIT:
            raise QuizError(
                f"time_limit is in minutes, {MIN_TIME_LIMIT:g} to {MAX_TIME_LIMIT} "
                "(7.5 is 7 min 30 s).",
                field="time_limit",
            )
        values["time_limit"] = round(limit * 60) / 60  # to the second
    attempts = values.get("attempts_allowed", 1)
    if (
        isinstance(attempts, bool)
        or not isinstance(attempts, int)
        or not 1 <= attempts <= MAX_ATTEMPTS
    ):
        raise QuizError(
            f"attempts_allowed is a whole number from 1 to {MAX_ATTEMPTS}.",
            field="attempts_allowed",
        )


def quiz_create(*, cohort, actor, slots: list[SlotSpec], **values) -> Quiz:
    _check_settings(values)
    rows = _check_slots(slots)
    with transaction.atomic():
        quiz = Quiz.objects.create(cohort=cohort, created_by=actor, **values)
        for row in rows:
            row.quiz = quiz
        QuizSlot.objects.bulk_create(rows)
        audit_created(actor=actor, instance=quiz)
    return quiz


def quiz_has_attempts(quiz: Quiz) -> bool:
    return quiz.attempts.filter(preview=False).exists()


def quiz_update(
    *, quiz: Quiz, actor, slots: list[SlotSpec] | None = None, now=None, **values
):
    """Change settings (and slots, unless learners have attempts: they drew them).

    Attempts in progress follow a new close or time limit: closing early
    closes everyone (an attempt whose new deadline has passed is submitted
    with its saved answers), so feedback after close never opens while
    someone can still answer.
    """
    now = now or timezone.now()
    archived = values.pop("archived", None)
    merged = {
        "title": quiz.title,
        "opens_at": quiz.opens_at,
        "closes_at": quiz.closes_at,
        "time_limit": quiz.time_limit,
        "attempts_allowed": quiz.attempts_allowed,
        **values,
    }
    _check_settings(merged)
    rows = None if slots is None else _check_slots(slots)
    with transaction.atomic():
        quiz = Quiz.objects.select_for_update().get(pk=quiz.pk)
        before = audit_snapshot(quiz)
        before["slots"] = _slots_text(quiz)
        if rows is not None:
            if quiz_has_attempts(quiz):
                raise QuizError(
                    "Learners have attempts: the slots they drew cannot change. "
                    "Fix a question and regrade instead.",
                    field="slots",
                )
            quiz.slots.all().delete()
            quiz.attempts.filter(preview=True).delete()
            for row in rows:
                row.quiz = quiz
            QuizSlot.objects.bulk_create(rows)
        for name, value in merged.items():
            setattr(quiz, name, value)
        if archived is not None:
            quiz.archived_at = timezone.now() if archived else None
        quiz.save()
        after = audit_snapshot(quiz)
        after["slots"] = _slots_text(quiz)
        changes = audit_changes(old=before, new=after)
        if changes:
            audit_record(
                actor=actor, action=Action.UPDATE, instance=quiz, changes=changes
            )
        if {"closes_at", "time_limit"} & set(changes):
            _deadlines_follow(quiz, now=now)
    close_expired(quiz=quiz, now=now)
    return quiz


def _deadlines_follow(quiz: Quiz, *, now, learner=None) -> None:
    """Give the attempts in progress the deadline today's settings make."""
    running = QuizAttempt.objects.select_for_update().filter(
        quiz=quiz, state=QuizAttempt.State.IN_PROGRESS
    )
    if learner is not None:
        running = running.filter(learner=learner)
    accommodations = {
        a.learner_id: a for a in QuizAccommodation.objects.filter(quiz=quiz)
    }
    for attempt in running:
        deadline = _deadline(
            quiz, accommodations.get(attempt.learner_id), attempt.started_at
        )
        if attempt.preview:
            deadline = max(deadline, attempt.deadline)  # a preview is never cut
        if deadline != attempt.deadline:
            attempt.deadline = deadline
            attempt.save(update_fields=["deadline"])


def quiz_close_now(*, quiz: Quiz, actor, now=None) -> Quiz:
    """Close the quiz for everyone at once: later closes granted end now too,
    running attempts are submitted with their saved answers, and held-back
    feedback opens as the policy says (announced to the gradebook and LMS)."""
    now = (now or timezone.now()).replace(microsecond=0)
    if now <= quiz.opens_at:
        raise QuizError(
            "This quiz has not opened yet: change its dates instead.",
            field="closes_at",
        )
    with transaction.atomic():
        quiz = Quiz.objects.select_for_update().get(pk=quiz.pk)
        later = QuizAccommodation.objects.select_for_update().filter(
            quiz=quiz, closes_at__gt=now
        )
        for row in later:
            audit_record(
                actor=actor,
                action=Action.UPDATE,
                instance=row,
                changes={"closes_at": [row.closes_at.isoformat(), now.isoformat()]},
            )
        later.update(closes_at=now)
        if quiz.closes_at > now:
            audit_record(
                actor=actor,
                action=Action.UPDATE,
                instance=quiz,
                changes={
                    "closes_at": [quiz.closes_at.isoformat(), now.isoformat()],
                    "closed": [None, "closed now by an instructor"],
                },
            )
            quiz.closes_at = now
            quiz.save(update_fields=["closes_at", "updated_at"])
        _deadlines_follow(quiz, now=now)
    for attempt in QuizAttempt.objects.filter(
        quiz=quiz, state=QuizAttempt.State.IN_PROGRESS, preview=False
    ):
        attempt_submit(attempt=attempt, by="instructor", now=now)
    scores_release(now=now, quiz=quiz)
    return quiz


def quiz_reopen(
    *, quiz: Quiz, learner, actor, closes_at, extra_attempts: int = 1, now=None
) -> QuizAccommodation:
    """Let one learner answer again: a later close and more attempts, audited.

    With feedback after close this holds everyone's feedback again until
    the learner's new close (the policy: nobody may still answer).
    """
    now = now or timezone.now()
    if closes_at is None or closes_at <= now:
        raise QuizError("Give a close in the future.", field="closes_at")
    if (
        isinstance(extra_attempts, bool)
        or not isinstance(extra_attempts, int)
        or not 0 <= extra_attempts <= MAX_EXTRA_ATTEMPTS
    ):
        raise QuizError(
            f"extra_attempts is a whole number from 0 to {MAX_EXTRA_ATTEMPTS}.",
            field="extra_attempts",
        )
    row = QuizAccommodation.objects.filter(quiz=quiz, learner=learner).first()
    return accommodation_set(
        quiz=quiz,
        learner=learner,
        actor=actor,
        closes_at=closes_at,
        extra_attempts=(row.extra_attempts if row else 0) + extra_attempts,
        now=now,
    )


def _slots_text(quiz: Quiz) -> list[str]:
    return [f"{s.points:g}x{s.draw} {s.pool}" for s in quiz.slots.all()]


def quiz_delete(*, quiz: Quiz, actor) -> None:
    if quiz.assignment_items.exists():
        raise QuizError(
            "An assignment holds this quiz: remove it from the assignment "
            'first, or archive the quiz (PATCH {"archived": true}).'
        )
    if quiz_has_attempts(quiz):
        raise QuizError(
            "Learners have attempts on this quiz: archive it instead "
            '(PATCH {"archived": true}), so their scores stay.'
        )
    with transaction.atomic():
        snapshot = audit_snapshot(quiz)
        quiz.attempts.all().delete()
        audit_record(
            actor=actor,
            action=Action.DELETE,
            instance=quiz,
            changes={k: [v, None] for k, v in snapshot.items()},
        )
        quiz.delete()


def accommodation_set(
    *,
    quiz: Quiz,
    learner,
    actor,
    time_factor=None,
    closes_at=None,
    extra_attempts=None,
    now=None,
) -> QuizAccommodation:
    now = now or timezone.now()
    if not CohortMembership.objects.filter(cohort=quiz.cohort, user=learner).exists():
        raise QuizError(f"{learner.username} is not in this cohort.", field="learner")
    if closes_at is not None and closes_at <= quiz.opens_at:
        raise QuizError(
            "A later close must be after the quiz opens.", field="closes_at"
        )
    if extra_attempts is not None and (
        isinstance(extra_attempts, bool)
        or not isinstance(extra_attempts, int)
        or not 0 <= extra_attempts <= MAX_EXTRA_ATTEMPTS
    ):
        raise QuizError(
            f"extra_attempts from 0 to {MAX_EXTRA_ATTEMPTS}.", field="extra_attempts"
        )
    if time_factor is not None and not (
        _real(time_factor) is not None and 1 <= time_factor <= MAX_TIME_FACTOR
    ):
        raise QuizError(
            f"time_factor from 1 to {MAX_TIME_FACTOR:g} (1.5 is half again).",
            field="time_factor",
        )
    with transaction.atomic():
        row, created = QuizAccommodation.objects.select_for_update().get_or_create(
            quiz=quiz, learner=learner, defaults={"granted_by": actor}
        )
        before = audit_snapshot(row)
        if time_factor is not None:
            row.time_factor = float(time_factor)
        if closes_at is not None:
            row.closes_at = closes_at
        if extra_attempts is not None:
            row.extra_attempts = extra_attempts
        row.granted_by = actor
        row.save()
        changes = audit_changes(old=before, new=audit_snapshot(row))
        audit_record(
            actor=actor,
            action=Action.CREATE if created else Action.UPDATE,
            instance=row,
            changes=changes,
        )
        # An attempt in progress gets the new deadline too.
        _deadlines_follow(quiz, now=now, learner=learner)
    close_expired(quiz=quiz, learner=learner, now=now)
    return row


# Attempts --------------------------------------------------------------------


def _deadline(quiz: Quiz, accommodation, started_at: datetime) -> datetime:
    closes = closing_time(quiz, accommodation)
    if quiz.time_limit is None:
        return closes
    factor = accommodation.time_factor if accommodation else 1.0
    return min(started_at + timedelta(minutes=quiz.time_limit * factor), closes)


def _draw(quiz: Quiz, seed: str) -> list[dict]:
    """The questions an attempt with `seed` shows, in its order, options shuffled."""
    rng = random.Random(seed)
    chosen = []
    slots = list(quiz.slots.all())
    pools = {slot.pk: pool_refs(slot.pool) for slot in slots}
    for slot in slots:
        for ref in rng.sample(pools[slot.pk], min(slot.draw, len(pools[slot.pk]))):
            chosen.append((slot, ref))
    if quiz.shuffle:
        rng.shuffle(chosen)
    bank = Bank(ref for _slot, ref in chosen)
    items = []
    for n, (slot, ref) in enumerate(chosen):
        variant_seed = f"{seed}:{n}"
        drawn = bank.draw(ref, variant_seed)
        order = list(range(len(drawn.options)))
        # A template stores its right answer first: its options are always
        # shuffled, or "shuffle off" would give the key away.
        if quiz.shuffle or ref.startswith("t:"):
            rng.shuffle(order)
        items.append(
            {
                "slot": slot.pk,
                "slot_number": slot.order + 1,
                "ref": ref,
                "seed": variant_seed,
                "order": order,
                "points": slot.points / slot.draw,
            }
        )
    return items


def attempt_start(
    *, quiz: Quiz, learner, preview: bool = False, restart: bool = False, now=None
):
    """The attempt in progress, or a new one; AttemptRefused if none may start.

    `restart` (previews only) ends the preview in progress and draws again.
    Returns (attempt, created).
    """
    now = now or timezone.now()
    if quiz.archived_at is not None and not preview:
        raise AttemptRefused("This quiz is archived.")
    if (
        not preview
        and not CohortMembership.objects.filter(
            cohort=quiz.cohort, user=learner
        ).exists()
    ):
        raise AttemptRefused("You are not in this quiz's cohort.")
    close_expired(quiz=quiz, learner=learner, now=now)
    with transaction.atomic():
        current = (
            QuizAttempt.objects.select_for_update()
            .filter(quiz=quiz, learner=learner, state=QuizAttempt.State.IN_PROGRESS)
            .first()
        )
        if current is not None:
            if current.preview == preview and not (preview and restart):
                return current, False
            attempt_submit(attempt=current, by="learner", now=now)
        accommodation = QuizAccommodation.objects.filter(
            quiz=quiz, learner=learner
        ).first()
        if not preview:
            if now < quiz.opens_at:
                raise AttemptRefused(
                    f"This quiz opens at {quiz.opens_at:%Y-%m-%d %H:%M} UTC."
                )
            if now >= closing_time(quiz, accommodation):
                raise AttemptRefused("This quiz has closed.")
        done = QuizAttempt.objects.filter(quiz=quiz, learner=learner, preview=preview)
        count = done.count()
        allowed = attempts_allowed(quiz, accommodation)
        if not preview and count >= allowed:
            raise AttemptRefused(
                f"You have used all {allowed} attempt(s) of this quiz."
            )
        seed = secrets.token_hex(16)
        try:
            with transaction.atomic():
                attempt = QuizAttempt.objects.create(
                    quiz=quiz,
                    learner=learner,
                    number=count + 1,
                    preview=preview,
                    seed=seed,
                    items=_draw(quiz, seed),
                    started_at=now,
                    deadline=_deadline(quiz, accommodation, now),
                )
        except IntegrityError:
            # Another tab started one at the same moment: resume that one.
            current = QuizAttempt.objects.get(
                quiz=quiz, learner=learner, state=QuizAttempt.State.IN_PROGRESS
            )
            return current, False
    return attempt, True


@dataclass
class SaveResult:
    attempt: QuizAttempt
    saved: list[str]
    errors: dict[str, str]


SHOWN_MAX = 20  # characters of a learner's input echoed in a message


def _shown(value) -> str:
    """Input as a message echoes it: cut to SHOWN_MAX characters."""
    try:
        text = str(value)
    except ValueError:  # an int past Python's digit limit
        return "(a number too long to show)"
    return text if len(text) <= SHOWN_MAX else text[:SHOWN_MAX] + "…"


def _item_index(attempt: QuizAttempt, key) -> int | None:
    """The index of question `key` (its number: "3" or 3), or None."""
    if isinstance(key, int) and not isinstance(key, bool):
        number = key
    elif isinstance(key, str):
        text = key.strip()
        # int() would take "²"-like digits, and refuses over 4,300 of them.
        if not (text.isascii() and text.isdigit()) or len(text) > 6:
            return None
        number = int(text)
    else:
        return None
    return number - 1 if 1 <= number <= len(attempt.items) else None


def _clean_answer(attempt: QuizAttempt, index: int, value):
    """The value to store for item `index`, or ValueError with the reason."""
    item = attempt.items[index]
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if code.is_code(item):
        return code.clean_code(value, starter=code.starter_of(item))
    if item["order"]:  # a choice: the learner picks a shown position
        if isinstance(value, str):
            text = value.strip()
            if not (text.isascii() and text.isdigit()):
                raise ValueError("Choose one of the options (its id).")
            if len(text) > 6:  # no such option, and int() refuses 4,301 digits
                raise ValueError(f"Option {_shown(text)} does not exist.")
            value = int(text)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError("Choose one of the options (its id).")
        if not 0 <= value < len(item["order"]):
            raise ValueError(f"Option {_shown(value)} does not exist.")
        return value
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError("Write a number.")
    try:
        return clean_number(value)
    except NotANumber as exc:
        raise ValueError(str(exc)) from None


def _clean_flags(attempt: QuizAttempt, flags) -> list[int]:
    """Question numbers flagged for review, checked; QuizError naming the field."""
    if not isinstance(flags, list) or len(flags) > len(attempt.items):
        raise QuizError("flags is a list of question numbers.", field="flags")
    numbers = set()
    for value in flags:
        index = _item_index(attempt, value)
        if index is None:
            raise QuizError(
                f"flags: there is no question {_shown(value)} in this attempt.",
                field="flags",
            )
        numbers.add(index + 1)
    return sorted(numbers)


def attempt_save(
    *, attempt: QuizAttempt, answers: dict, flags=None, now=None
) -> SaveResult:
    """Store the answers given; the bad ones are reported and change nothing.

    The row is locked, so two tabs saving at once apply one after the other
    (the later wins); AttemptClosed once the deadline has passed. `flags`,
    if given, replaces the questions flagged for review.
    """
    now = now or timezone.now()
    if not isinstance(answers, dict):
        raise QuizError(
            "answers is an object of question number -> answer.", field="answers"
        )
    with transaction.atomic():
        attempt = QuizAttempt.objects.select_for_update().get(pk=attempt.pk)
        if attempt.state != QuizAttempt.State.IN_PROGRESS:
            raise AttemptClosed("This attempt was submitted; answers can't change.")
        expired = now >= attempt.deadline
        flagged = None if flags is None else _clean_flags(attempt, flags)
        if flagged is not None and not expired and flagged != attempt.flags:
            attempt.flags = flagged
            attempt.save(update_fields=["flags"])
        locked = (
            attempt.quiz.feedback == Quiz.Feedback.IMMEDIATE and not attempt.preview
        )
        saved, errors = [], {}
        stored = dict(attempt.answers)
        code_saved = False
        for key, value in {} if expired else answers.items():
            index = _item_index(attempt, key)
            if index is None:
                # Keyed and worded with the key cut: a question's is 6 digits.
                errors[_shown(key)] = (
                    f"There is no question {_shown(key)} in this attempt."
                )
                continue
            slot = attempt.items[index]["slot_number"]
            if locked and (stored.get(str(index + 1)) or {}).get("value") is not None:
                errors[str(key)] = (
                    f"Question {index + 1} (slot {slot}) was checked: with "
                    "immediate feedback an answer is final once saved."
                )
                continue
            try:
                clean = _clean_answer(attempt, index, value)
            except ValueError as exc:
                errors[str(key)] = f"Question {index + 1} (slot {slot}): {exc}"
                continue
            stored[str(index + 1)] = {"value": clean, "saved_at": now.isoformat()}
            saved.append(str(index + 1))
            code_saved = code_saved or (
                code.is_code(attempt.items[index]) and clean is not None
            )
        if saved:
            attempt.answers = stored
            attempt.saves += 1
            attempt.code_waiting = attempt.code_waiting or code_saved
            attempt.save(update_fields=["answers", "saves", "code_waiting"])
        if code_saved and locked:
            code.code_release(attempt, now)  # checked: the grader takes it now
    if expired:
        attempt_submit(attempt=attempt, by="deadline", now=attempt.deadline)
        raise AttemptClosed(
            "Time is up: this answer arrived after the deadline and was not "
            "saved. Your earlier answers were submitted."
            if answers
            else "Time is up: the attempt was submitted with your saved answers."
        )
    return SaveResult(attempt=attempt, saved=saved, errors=errors)


def attempt_submit(*, attempt: QuizAttempt, by: str = "learner", now=None):
    """Close and score an attempt; submitting it again changes nothing.

    With feedback per attempt, submitting the last one opens the feedback
    of the learner's earlier attempts too: their code goes to the grader.
    """
    now = now or timezone.now()
    with transaction.atomic():
        attempt = QuizAttempt.objects.select_for_update().get(pk=attempt.pk)
        if attempt.state == QuizAttempt.State.SUBMITTED:
            return attempt
        attempt.state = QuizAttempt.State.SUBMITTED
        attempt.submitted_at = min(now, attempt.deadline)
        attempt.submitted_by = by
        apply_score(attempt, score_items(attempt))
        attempt.save()
        if not attempt.preview:
            scores_changed([attempt.learner_id])
        waiting = QuizAttempt.objects.filter(
            quiz_id=attempt.quiz_id,
            learner_id=attempt.learner_id,
            state=QuizAttempt.State.SUBMITTED,
            code_waiting=True,
        )
        for other in waiting:
            code.code_release(other, now)
    return attempt


def attempt_refresh(attempt: QuizAttempt, now=None) -> QuizAttempt:
    """The attempt as it stands now: submitted first if its deadline passed."""
    now = now or timezone.now()
    if attempt.state == QuizAttempt.State.IN_PROGRESS and attempt.deadline <= now:
        return attempt_submit(attempt=attempt, by="deadline", now=attempt.deadline)
    return attempt


def close_expired(*, quiz=None, learner=None, now=None) -> int:
    """Submit every attempt whose deadline has passed (the periodic task's job)."""
    now = now or timezone.now()
    open_ = QuizAttempt.objects.filter(
        state=QuizAttempt.State.IN_PROGRESS, deadline__lte=now
    )
    if quiz is not None:
        open_ = open_.filter(quiz=quiz)
    if learner is not None:
        open_ = open_.filter(learner=learner)
    closed = 0
    for attempt in open_.order_by("deadline")[:1000]:
        attempt_submit(attempt=attempt, by="deadline", now=attempt.deadline)
        closed += 1
    return closed


def scores_release(*, now=None, quiz: Quiz | None = None) -> int:
    """Announce the held-back scores a close has just opened (periodic).

    A score held until the learner's or everyone's window closes changes
    nothing when it opens, so no score event fires by itself: this sends
    `scores_changed` for the learners of each held-back quiz once its main
    close or a later close granted to one learner has passed (the gradebook
    reads the policy anyway; the LMS needs telling). `released_at` keeps the
    latest close announced, so each close is announced once; a reopen or a
    later close is announced again when it passes. Returns the quizzes
    announced.
    """
    now = now or timezone.now()
    quizzes = Quiz.objects.filter(
        feedback__in=HELD_BACK, archived_at__isnull=True, closes_at__lte=now
    )
    if quiz is not None:
        quizzes = quizzes.filter(pk=quiz.pk)
    announced = 0
    for row in quizzes.order_by("pk")[:200]:
        closes = [row.closes_at] + list(
            QuizAccommodation.objects.filter(
                quiz=row, closes_at__isnull=False, closes_at__lte=now
            ).values_list("closes_at", flat=True)
        )
        latest = max(closes)
        if row.released_at is not None and row.released_at >= latest:
            continue
        with transaction.atomic():
            updated = Quiz.objects.filter(pk=row.pk, released_at=row.released_at)
            if not updated.update(released_at=latest):
                continue  # another worker announced it
            learners = set(
                QuizAttempt.objects.filter(quiz=row, preview=False).values_list(
                    "learner_id", flat=True
                )
            )
            if learners:
                scores_changed(sorted(learners))
        announced += 1
    return announced
