"""What the LMS app plugs into the layers below: grades go out when work changes."""

from __future__ import annotations

from django.conf import settings

from lms import tasks
from lms.models import LmsAccount
from quiz.core.score_events import score_listener_register


def learners_changed(user_ids: list[int]) -> None:
    """Queue a score refresh for each of these learners an LMS knows."""
    linked = (
        LmsAccount.objects.filter(user_id__in=user_ids)
        .values_list("user_id", flat=True)
        .distinct()
    )
    for user_id in linked:
        tasks.refresh_learner.apply_async(
            args=[user_id], queue=settings.CELERY_TASK_DEFAULT_QUEUE
        )


def connect() -> None:
    score_listener_register(learners_changed)
