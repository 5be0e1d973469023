"""Two tabs saving the same attempt at once: every save lands, none is lost.

A save reads the attempt's answers, adds to them and writes them back; the
row lock in services.attempt_save makes concurrent saves take turns. Without
it, two saves that read the same answers lose one another's (the check
below fails within a few rounds).
"""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from teaching.models import QuizAttempt
from teaching.quizzes import services
from tests.quiz.cohort_fixtures import *  # noqa: F403
from tests.quiz.quiz_fixtures import *  # noqa: F403
from tests.quiz.quiz_fixtures import create, start

ROUNDS = 15


@pytest.mark.django_db(transaction=True)
def test_concurrent_saves_of_one_attempt_all_land(world, quiz_course):
    quiz = create(world, shuffle=False)
    attempt = QuizAttempt.objects.get(pk=start(world.lea, quiz["id"]).json()["id"])
    barrier = threading.Barrier(2)
    failures: list[BaseException] = []

    def tab(number: str, values: list[str]) -> None:
        try:
            for value in values:
                barrier.wait(timeout=10)  # both tabs save at the same moment
                services.attempt_save(attempt=attempt, answers={number: value})
        except Exception as exc:  # noqa: BLE001 - reported below, not lost
            failures.append(exc)
        finally:
            connection.close()

    first = [str(n) for n in range(ROUNDS)]
    second = [str(1000 + n) for n in range(ROUNDS)]
    threads = [
        threading.Thread(target=tab, args=("1", first)),
        threading.Thread(target=tab, args=("3", second)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures
    attempt.refresh_from_db()
    assert attempt.saves == 2 * ROUNDS
    assert attempt.answers["1"]["value"] == first[-1]
    assert attempt.answers["3"]["value"] == second[-1]
