"""Submission throttles live in the service: the API and the HTML form share them.

Real Redis counters (cache.add + cache.incr) and real PostgreSQL row locks;
the concurrency tests use threads and separate processes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from grader import services
from grader.models import Submission
from tests.conftest import PROJECT_ROOT

SOLUTION = "def block_param_count(n_embd):\n    return 12 * n_embd**2 + 13 * n_embd\n"


@pytest.fixture
def api(learner) -> APIClient:
    client = APIClient()
    client.force_authenticate(learner)
    return client


def api_submit(api, code=SOLUTION):
    return api.post(
        reverse("api-submission-create", args=["block-param-count"]),
        {"code": code},
        format="json",
    )


def form_submit(client, code=SOLUTION):
    return client.post(reverse("exercise", args=["block-param-count"]), {"code": code})


@pytest.mark.django_db
def test_the_html_form_is_throttled_and_keeps_the_code(
    client, learner, block_exercise, settings
):
    settings.SUBMISSION_RATE = "2/min"
    client.force_login(learner)
    assert [form_submit(client).status_code for _ in range(2)] == [302, 302]
    mine = "def block_param_count(n_embd):\n    return 'my own <work>'\n"
    response = form_submit(client, code=mine)
    assert response.status_code == 429
    assert 1 <= int(response["Retry-After"]) <= 60
    html = response.content.decode()
    assert "Not submitted: too many submissions: the limit is 2 per minute" in html
    assert "return &#x27;my own &lt;work&gt;&#x27;" in html  # still in the editor
    assert Submission.objects.count() == 2


@pytest.mark.django_db
def test_the_api_answers_429_json_with_retry_after(api, block_exercise, settings):
    settings.SUBMISSION_RATE = "1/hour"
    assert api_submit(api).status_code == 202
    response = api_submit(api)
    assert response.status_code == 429
    assert response["Content-Type"].startswith("application/json")
    assert "limit is 1 per hour" in response.json()["detail"]
    assert 3000 < int(response["Retry-After"]) <= 3600


@pytest.mark.django_db
def test_the_api_and_the_form_share_one_budget(
    api, client, learner, block_exercise, settings
):
    settings.SUBMISSION_RATE = "3/min"
    client.force_login(learner)
    assert api_submit(api).status_code == 202
    assert form_submit(client).status_code == 302
    assert api_submit(api).status_code == 202
    assert form_submit(client).status_code == 429  # the fourth, by either path
    assert api_submit(api).status_code == 429
    assert Submission.objects.filter(user=learner).count() == 3


@pytest.mark.django_db
def test_the_budget_is_per_learner(api, block_exercise, settings, make_user):
    settings.SUBMISSION_RATE = "1/min"
    assert api_submit(api).status_code == 202
    assert api_submit(api).status_code == 429
    services.submission_create(
        user=make_user("bob"), exercise=block_exercise, code=SOLUTION
    )


@pytest.mark.django_db
def test_outstanding_submissions_are_capped_on_both_paths(
    api, client, learner, block_exercise, settings
):
    settings.SUBMISSION_MAX_OUTSTANDING = 2
    client.force_login(learner)
    first = api_submit(api).json()
    assert form_submit(client).status_code == 302
    refused = api_submit(api)
    assert refused.status_code == 429
    assert "2 submissions waiting to be graded" in refused.json()["detail"]
    page = form_submit(client)
    assert page.status_code == 429 and "at most 2 at a time" in page.content.decode()
    # Once one is graded, the learner may submit again.
    Submission.objects.filter(pk=first["id"]).update(status="passed")
    assert api_submit(api).status_code == 202
    running = Submission.objects.filter(user=learner, status="queued").first()
    Submission.objects.filter(pk=running.pk).update(status="running")
    assert api_submit(api).status_code == 429  # running counts as outstanding


@pytest.mark.django_db(transaction=True)
def test_concurrent_submissions_cannot_pass_the_cap(learner, block_exercise, settings):
    """Eight threads, eight database connections, one learner: exactly the cap."""
    settings.SUBMISSION_MAX_OUTSTANDING = 3
    settings.SUBMISSION_RATE = "1000/min"
    outcomes: list[str] = []
    barrier = threading.Barrier(8)

    def one():
        from django.db import connection

        barrier.wait()
        try:
            services.submission_create(
                user=learner, exercise=block_exercise, code=SOLUTION
            )
            outcomes.append("accepted")
        except services.SubmissionThrottled:
            outcomes.append("throttled")
        finally:
            connection.close()

    threads = [threading.Thread(target=one) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["accepted"] * 3 + ["throttled"] * 5
    assert Submission.objects.filter(user=learner).count() == 3


SUBMITTER = """
import json, os, sys, time
from pathlib import Path
from django.conf import settings
settings.CACHES["default"]["KEY_PREFIX"] = os.environ["TEST_CACHE_PREFIX"]
from django.contrib.auth.models import User
from grader import services
from grader.models import Exercise
user = User.objects.get(username="lea")
exercise = Exercise.objects.get(slug="block-param-count")
gate = Path(os.environ["GATE"])
(gate / f"ready-{os.getpid()}").touch()
while not (gate / "go").exists():
    time.sleep(0.01)
out = []
for _ in range(4):
    try:
        services.submission_create(user=user, exercise=exercise, code="x = 1")
        out.append("accepted")
    except services.SubmissionThrottled:
        out.append("throttled")
print(json.dumps(out))
"""


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_rate_holds_across_processes(learner, block_exercise, settings, tmp_path):
    """Four processes race one learner's budget of 6: exactly 6 get through."""
    from django.db import connection

    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/"
        + connection.settings_dict["NAME"],
        "SUBMISSION_RATE": "6/min",
        "SUBMISSION_MAX_OUTSTANDING": "1000",
        "TEST_CACHE_PREFIX": settings.CACHES["default"]["KEY_PREFIX"],
        "GATE": str(tmp_path),
    }
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", "import django; django.setup()\n" + SUBMITTER],
            cwd=PROJECT_ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    deadline = time.monotonic() + 120
    while len(list(tmp_path.glob("ready-*"))) < 4:
        assert time.monotonic() < deadline, "the submitters never started"
        assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
        time.sleep(0.05)
    (tmp_path / "go").touch()
    outcomes = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        outcomes += json.loads(out.strip().splitlines()[-1])
    assert outcomes.count("accepted") == 6 and outcomes.count("throttled") == 10
    assert Submission.objects.filter(user=learner).count() == 6
