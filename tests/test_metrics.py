"""/metrics: Prometheus's text format, parsed by prometheus-client's own
parser; the figures follow what happened (requests, refusals, grades, the
queue, LMS deliveries); only the token or this host may read it."""

from __future__ import annotations

import random
import string

import pytest
from django.test import Client
from django.utils import timezone
from grading_engine.grading import CheckResult, Verdict
from prometheus_client.parser import text_string_to_metric_families

from config.metrics import METHODS
from grader import metrics, stream_caps
from grader.models import Submission
from lms.models import LinkScore

pytestmark = pytest.mark.django_db


def scrape(client: Client, **headers) -> dict[str, list]:
    response = client.get("/metrics", **headers)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=0.0.4")
    return {
        family.name: family.samples
        for family in text_string_to_metric_families(response.content.decode())
    }


def total(families, name: str, **labels) -> float:
    """The sum of the samples called `name` with these labels (0 if none)."""
    return sum(
        sample.value
        for samples in families.values()
        for sample in samples
        if sample.name == name
        and all(sample.labels.get(k) == v for k, v in labels.items())
    )


def link_score(learner, deployment, n: int, **state) -> LinkScore:
    return LinkScore.objects.create(
        deployment=deployment, resource_link_id=f"link-{n}", learner=learner,
        lineitem_url=f"https://lms.example/items/{n}", target="lesson:x",
        lms_user_id=f"u-{n}", score=50.0, computed_at=timezone.now(), **state,
    )  # fmt: skip


def test_metrics_follow_requests_grades_the_queue_and_lms_deliveries(
    learner, block_exercise, settings
):
    from lti_tool.models import LtiDeployment, LtiRegistration

    client = Client()  # REMOTE_ADDR 127.0.0.1: this host
    before = scrape(client)
    healthz = {"view": "healthz", "method": "GET"}
    refusals = {"cap": "process"}
    grades = {"exercise": "block-param-count", "lane": "light"}
    client.get("/healthz")
    client.get("/healthz")
    for lane in ("light", "light", "heavy"):
        Submission.objects.create(
            user=learner, exercise=block_exercise, code="x", seed=1, lane=lane
        )
    registration = LtiRegistration.objects.create(
        name="LMS", issuer="https://lms.example", client_id="c",
        auth_url="https://lms.example/a", token_url="https://lms.example/t",
        keyset_url="https://lms.example/k",
    )  # fmt: skip
    deployment = LtiDeployment.objects.create(
        registration=registration, deployment_id="d", is_active=True
    )
    link_score(learner, deployment, 1, version=2, sent_version=1)
    link_score(learner, deployment, 2, version=1, sent_version=1)
    link_score(learner, deployment, 3, version=1, failed=True)
    settings.STREAM_MAX_PER_PROCESS = 0
    with pytest.raises(stream_caps.StreamRefused):
        stream_caps.stream_take(learner.pk, lifetime=30)
    crashed = Verdict("error", 0.0, [CheckResult("run", False, "killed")])
    metrics.grade_recorded(verdict=crashed, **grades)

    after = scrape(client)

    def grew(name: str, **labels) -> float:
        return total(after, name, **labels) - total(before, name, **labels)

    assert grew("course_request_seconds_count", **healthz) == 2
    assert grew("course_stream_refusals_total", **refusals) == 1
    assert grew("course_sandbox_crashes_total") == 1
    assert grew("course_grade_seconds_count", **grades) == 1
    assert grew("course_grades_total", status="error") == 1
    assert total(after, "course_queue_depth", lane="light") == 2
    assert total(after, "course_queue_depth", lane="heavy") == 1
    assert [
        total(after, "course_lms_scores", state=state)
        for state in ("pending", "delivered", "failed")
    ] == [1, 1, 1]
    assert "course_streams_open" in after and "course_grades_running" in after


def test_only_the_token_or_this_host_reads_the_metrics(settings):
    elsewhere = Client(REMOTE_ADDR="10.0.0.7")
    assert elsewhere.get("/metrics").status_code == 403
    settings.METRICS_TOKEN = "s3cret-metrics"
    assert Client().get("/metrics").status_code == 403  # this host, no token
    wrong = elsewhere.get("/metrics", HTTP_AUTHORIZATION="Bearer nope")
    assert wrong.status_code == 403 and "token" in wrong.json()["detail"]
    assert scrape(elsewhere, HTTP_AUTHORIZATION="Bearer s3cret-metrics")


def test_the_dashboard_charts_only_metrics_the_code_exports():
    import json
    import re

    from config import metrics as web_metrics
    from lms.metrics import ScoresCollector
    from tests.conftest import PROJECT_ROOT

    dashboard = json.loads(
        (PROJECT_ROOT / "docs" / "grafana-dashboard.json").read_text()
    )
    charted = {
        re.sub(r"_(bucket|total|count|sum)$", "", name)
        for panel in dashboard["panels"]
        for target in panel["targets"]
        for name in re.findall(r"course_\w+", target["expr"])
    }
    exported = {
        family.name
        for collector in (
            metrics.QueueCollector(),
            metrics.LanesCollector(),
            ScoresCollector(),
        )
        for family in collector.collect()
    }
    for module in (metrics, web_metrics):
        exported |= {
            getattr(value, "_name", None)
            for value in vars(module).values()
            if hasattr(value, "_name") and hasattr(value, "collect")
        }
    assert len(charted) >= 12 and charted <= exported, charted - exported


def test_strangers_cannot_add_series_with_odd_methods_or_paths():
    """A thousand anonymous requests, random methods and paths: the request
    histogram gains a bounded number of series, none named by the caller."""
    rng = random.Random(43)
    stranger = Client(REMOTE_ADDR="10.0.0.7")
    here = Client()
    shapes = [
        "/zz{}",
        "/zz{}/deeper/",
        "/lessons/zz{}/",
        "/exercises/zz{}/",
        "/api/v1/zz{}/",
        "/api/v1/exercises/zz{}/",
        "/static/zz{}.js",
    ]

    def series() -> set[tuple[str, str]]:
        return {
            (s.labels["view"], s.labels["method"])
            for s in scrape(here).get("course_request_seconds", [])
            if s.name == "course_request_seconds_count"
        }

    before = series()
    for _ in range(1000):
        method = rng.choice(
            [
                "GET",
                "POST",
                "".join(rng.choices(string.ascii_uppercase, k=rng.randint(3, 12))),
            ]
        )
        path = rng.choice(shapes).format(rng.getrandbits(48))
        assert stranger.generic(method, path).status_code < 500, (method, path)
    added = series() - before
    assert {method for _, method in added} <= METHODS | {"other"}
    assert not [view for view, _ in added if "zz" in view]
    # At most each shape's route (or `unmatched`) times the methods' labels.
    assert len(added) <= len(shapes) * (len(METHODS) + 1), sorted(added)
    assert ("unmatched", "other") in added
