"""What the LMS app does when the layers below announce a fact: grades go out
when a learner's work changes (quiz.core.score_events, connected in
LmsConfig.ready())."""

from __future__ import annotations

from django.conf import settings

from lms import tasks
from lms.models import LmsAccount


def learners_changed(sender, *, user_ids: list[int], **kwargs) -> None:
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
