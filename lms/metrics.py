"""Prometheus metrics of grade delivery to LMSs, read from the database at
scrape: scores pending, delivered and failed (config.metrics serves them)."""

from __future__ import annotations

from django.db.models import Count, F, Q
from prometheus_client.core import GaugeMetricFamily

from lms.models import LinkScore, ScoreSync


class ScoresCollector:
    def collect(self):
        family = GaugeMetricFamily(
            "course_lms_scores",
            "Scores owed to LMSs, by state: pending (a newer version to send), "
            "delivered (the LMS has the latest), failed (refused; waits for a "
            "change).",
            labels=["state"],
        )
        totals = {"pending": 0, "delivered": 0, "failed": 0}
        for model in (ScoreSync, LinkScore):
            counts = model.objects.aggregate(
                n_failed=Count("pk", filter=Q(failed=True)),
                n_delivered=Count(
                    "pk", filter=Q(failed=False, sent_version__gte=F("version"))
                ),
                n_pending=Count(
                    "pk", filter=Q(failed=False, sent_version__lt=F("version"))
                ),
            )
            for state in totals:
                totals[state] += counts[f"n_{state}"]
        for state, value in totals.items():
            family.add_metric([state], value)
        yield family
