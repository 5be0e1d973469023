"""Spaced review with FSRS: schedule, rate and list a learner's review cards.

A ReviewCard keeps fsrs's own Card.to_dict() in `state` and copies `due` out
of it, so "what is due" is an indexed query and fsrs stays the only thing that
does the scheduling arithmetic.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from functools import cache

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from fsrs import Card, Rating, Scheduler

from quiz.content.models import FollowUp, Question
from quiz.learning.models import ReviewCard, ReviewLog

RATINGS = [
    (Rating.Again, "Again"),
    (Rating.Hard, "Hard"),
    (Rating.Good, "Good"),
    (Rating.Easy, "Easy"),
]


class RatingInvalid(ValueError):
    """A rating that is not Again/Hard/Good/Easy (1-4)."""


@cache
def _scheduler() -> Scheduler:
    return Scheduler()


def _utc(moment: dt.datetime) -> dt.datetime:
    # fsrs refuses any tzinfo other than datetime.timezone.utc itself.
    return moment.astimezone(dt.UTC)


def _new_state(now: dt.datetime) -> dict:
    # card_id is irrelevant here (the row has its own id); passing it skips
    # fsrs's 1 ms sleep per new card.
    return Card(card_id=int(now.timestamp() * 1000), due=now).to_dict()


def rating_parse(raw: object) -> Rating:
    """Turn a posted value ("1".."4" or "again".."easy") into a Rating."""
    text = str(raw or "").strip().lower()
    for rating, label in RATINGS:
        if text in (str(int(rating)), label.lower()):
            return rating
    raise RatingInvalid("Choose a rating: Again, Hard, Good or Easy.")


def _pull_due(cards: Iterable[ReviewCard], *, now: dt.datetime, reason: str) -> int:
    """Make existing cards due now; returns how many were not due yet."""
    moved = 0
    for card in cards:
        if card.due <= now:
            continue
        card.due = now
        card.state = {**card.state, "due": now.isoformat()}
        card.reason = reason
        card.save(update_fields=["due", "state", "reason", "updated_at"])
        moved += 1
    return moved


def cards_schedule(
    *, user, follow_ups: Iterable[FollowUp], reason: str, limit: int | None = None
) -> int:
    """Make each follow-up due for `user` now; return how many cards that changed.

    Creates a card for a follow-up the learner never rated and pulls an
    existing card's due date forward to now. Cards already due are left as
    they are and not counted, so calling twice in a row returns 0 the second
    time. `reason` is a ReviewCard.Reason value ("exercise" for a failed
    exercise check) and is recorded on every card this call changes.
    With `limit`, at most that many cards change, the first follow-ups (in
    the order given) first: one event must not flood the review queue.
    """
    if reason not in ReviewCard.Reason.values:
        raise ValueError(f"unknown review reason {reason!r}")
    order = list(dict.fromkeys(f.pk for f in follow_ups))
    if not order:
        return 0
    now = _utc(timezone.now())
    with transaction.atomic():
        existing = list(
            ReviewCard.objects.select_for_update().filter(
                user=user, follow_up_id__in=order
            )
        )
        if limit is not None:
            # Only cards this call would change count against the limit.
            due = {c.follow_up_id for c in existing if c.due <= now}
            wanted = set([pk for pk in order if pk not in due][: max(limit, 0)])
            existing = [c for c in existing if c.follow_up_id in wanted | due]
            order = [pk for pk in order if pk in wanted | due]
        ids = set(order)
        moved = _pull_due(existing, now=now, reason=reason)
        missing = ids - {c.follow_up_id for c in existing}
        ReviewCard.objects.bulk_create(
            [
                ReviewCard(
                    user=user,
                    follow_up_id=pk,
                    state=_new_state(now),
                    due=now,
                    reason=reason,
                )
                for pk in sorted(missing)
            ],
            # A card created by a concurrent request is already due: fine.
            ignore_conflicts=True,
        )
    return moved + len(missing)


def question_card_schedule(*, user, question: Question) -> ReviewCard:
    """A wrong self-check answer: make the question's card due now."""
    now = _utc(timezone.now())
    with transaction.atomic():
        card = (
            ReviewCard.objects.select_for_update()
            .filter(user=user, question=question)
            .first()
        )
        if card is None:
            ReviewCard.objects.bulk_create(
                [
                    ReviewCard(
                        user=user, question=question, state=_new_state(now), due=now
                    )
                ],
                ignore_conflicts=True,
            )
            return ReviewCard.objects.get(user=user, question=question)
        _pull_due([card], now=now, reason=card.reason)
        return card


def card_review(*, card: ReviewCard, rating: Rating) -> ReviewCard:
    """Rate one card through FSRS, store its new state and log the rating."""
    with transaction.atomic():
        card = ReviewCard.objects.select_for_update().get(pk=card.pk)
        now = _utc(timezone.now())
        state = card.state or _new_state(now)
        fsrs_card = Card.from_dict(state)
        fsrs_card.due = _utc(fsrs_card.due)
        if fsrs_card.last_review is not None:
            fsrs_card.last_review = _utc(fsrs_card.last_review)
        fsrs_card, _log = _scheduler().review_card(
            fsrs_card, Rating(rating), review_datetime=now
        )
        card.state = fsrs_card.to_dict()
        card.due = fsrs_card.due
        card.save(update_fields=["state", "due", "updated_at"])
        ReviewLog.objects.create(user_id=card.user_id, card=card, rating=int(rating))
    return card


def follow_up_rate(*, user, follow_up: FollowUp, rating: Rating) -> ReviewCard:
    """Rate a follow-up while reading: create its card if needed, then review it."""
    now = _utc(timezone.now())
    ReviewCard.objects.bulk_create(
        [ReviewCard(user=user, follow_up=follow_up, state=_new_state(now), due=now)],
        ignore_conflicts=True,
    )
    card = ReviewCard.objects.get(user=user, follow_up=follow_up)
    return card_review(card=card, rating=rating)


def question_card_review_good(*, user, question: Question) -> ReviewCard | None:
    """A right self-check answer counts as a Good review of its card, if any."""
    card = ReviewCard.objects.filter(user=user, question=question).first()
    if card is None:
        return None
    return card_review(card=card, rating=Rating.Good)


# Reads


def cards_due(*, user, now: dt.datetime | None = None) -> QuerySet[ReviewCard]:
    """The learner's due cards, oldest first, with what the page shows of each."""
    return (
        ReviewCard.objects.filter(user=user, due__lte=now or timezone.now())
        .select_related("follow_up__lesson", "question__lesson")
        .order_by("due", "pk")
    )


def cards_due_count(*, user) -> int:
    return ReviewCard.objects.filter(user=user, due__lte=timezone.now()).count()


def card_next_due(*, user) -> dt.datetime | None:
    """When the learner's next card falls due (for the empty review page)."""
    card = (
        ReviewCard.objects.filter(user=user, due__gt=timezone.now())
        .order_by("due")
        .only("due")
        .first()
    )
    return card.due if card else None


def card_get(*, user, card_id: int) -> ReviewCard:
    """One of the learner's own cards (another learner's is DoesNotExist)."""
    return ReviewCard.objects.get(user=user, pk=card_id)
