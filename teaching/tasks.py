"""The quiz app's periodic work: closing attempts whose time ran out."""

from celery import shared_task

from teaching.quizzes.code import code_sweep
from teaching.quizzes.services import close_expired, scores_release


@shared_task(name="quiz.close_expired", acks_late=True, ignore_result=True)
def close_expired_attempts() -> int:
    """Submit every attempt past its deadline, even if no page is open, then
    send to the grader the code whose feedback has opened (quizzes.code), and
    announce the held-back scores a close has opened (to the gradebook's
    listeners and the LMS).

    Idempotent: an attempt already submitted is left as it is, code already
    sent is not sent again.
    """
    closed = close_expired()
    code_sweep()
    scores_release()
    return closed
