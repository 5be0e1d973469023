"""The quiz app's periodic work: closing attempts whose time ran out."""

from celery import shared_task

from quiz.teaching.quizzes.services import close_expired


@shared_task(name="quiz.close_expired", acks_late=True, ignore_result=True)
def close_expired_attempts() -> int:
    """Submit every attempt past its deadline, even if no page is open.

    Idempotent: an attempt already submitted is left as it is.
    """
    return close_expired()
