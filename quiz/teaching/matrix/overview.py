"""The cohort overview: per-section completion per learner, at-risk first.

The full matrix is dozens of lesson columns; an instructor first wants to
know who needs a message and where the cohort stands per section. This
reads the same Matrix as the page's detail table (so the numbers agree) plus
three aggregate queries for activity and recent failures.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from django.db.models import Count, Exists, Max, OuterRef
from django.utils import timezone

from grader.models import Submission
from quiz.learning.models import LessonRead, QuestionAttempt
from quiz.teaching.matrix.build import Matrix
from quiz.teaching.models import Cohort
from quiz.teaching.selectors import cohort_members, member_ids

# A week without reading, answering or submitting: the course is paced in
# weekly sessions, so one missed week is the earliest point where a nudge
# helps and the latest where it is easy to catch up.
AT_RISK_IDLE_DAYS = 7
# Failed grades in that same week on exercises still not passed. The solution
# is shown after SOLUTION_AFTER_ATTEMPTS (5) graded attempts, so five fails
# without a pass means the feedback and the reference have not unblocked the
# learner: a person should look.
AT_RISK_FAILURES = 5


@dataclass
class SectionHead:
    slug: str
    title: str
    order: int


@dataclass
class SectionCompletion:
    section: SectionHead
    done: int
    total: int

    @property
    def percent(self) -> int | None:
        """Lessons read + self-checks right + exercises passed, of all of them."""
        return round(100 * self.done / self.total) if self.total else None


@dataclass
class OverviewRow:
    user_id: int
    username: str
    sections: list[SectionCompletion]
    last_active: dt.datetime | None
    failures: int
    reasons: list[str] = field(default_factory=list)

    @property
    def at_risk(self) -> bool:
        return bool(self.reasons)


@dataclass
class Overview:
    sections: list[SectionHead]
    rows: list[OverviewRow]
    idle_days: int = AT_RISK_IDLE_DAYS
    failure_limit: int = AT_RISK_FAILURES

    @property
    def at_risk_count(self) -> int:
        return sum(row.at_risk for row in self.rows)


def _days(delta: dt.timedelta) -> str:
    days = delta.days
    return "1 day" if days == 1 else f"{days} days"


def _risk_reasons(
    *, last_active, joined_at, failures: int, now: dt.datetime
) -> list[str]:
    """Why a learner needs a look, in words an instructor can act on."""
    reasons = []
    idle = dt.timedelta(days=AT_RISK_IDLE_DAYS)
    if last_active is None:
        if now - joined_at >= idle:
            reasons.append(f"no activity since joining {_days(now - joined_at)} ago")
    elif now - last_active >= idle:
        reasons.append(f"no activity for {_days(now - last_active)}")
    if failures >= AT_RISK_FAILURES:
        reasons.append(
            f"{failures} failed submissions in the last {AT_RISK_IDLE_DAYS} days "
            "on exercises not passed yet"
        )
    return reasons


def _last_active(cohort: Cohort) -> dict[int, dt.datetime]:
    """Each member's latest read, self-check answer or submission."""
    members = member_ids(cohort)
    latest: dict[int, dt.datetime] = {}
    sources = [
        LessonRead.objects.filter(user_id__in=members)
        .values("user_id")
        .annotate(at=Max("last_read_at")),
        QuestionAttempt.objects.filter(user_id__in=members)
        .values("user_id")
        .annotate(at=Max("created_at")),
        Submission.objects.filter(user_id__in=members)
        .values("user_id")
        .annotate(at=Max("created_at")),
    ]
    for rows in sources:
        for row in rows.order_by():
            if row["at"] and (
                row["user_id"] not in latest or row["at"] > latest[row["user_id"]]
            ):
                latest[row["user_id"]] = row["at"]
    return latest


def _recent_failures(cohort: Cohort, since: dt.datetime) -> dict[int, int]:
    """Failed grades since `since`, per member, on exercises they never passed."""
    passed = Submission.objects.filter(
        user_id=OuterRef("user_id"),
        exercise_id=OuterRef("exercise_id"),
        status=Submission.Status.PASSED,
    )
    rows = (
        Submission.objects.filter(
            user_id__in=member_ids(cohort),
            status=Submission.Status.FAILED,
            created_at__gte=since,
        )
        .filter(~Exists(passed))
        .values("user_id")
        .annotate(n=Count("pk"))
        .order_by()
    )
    return {row["user_id"]: row["n"] for row in rows}


def cohort_overview(
    *, cohort: Cohort, matrix: Matrix, now: dt.datetime | None = None
) -> Overview:
    """Per-section completion per member from `matrix` (all sections), with
    the learners at risk first (longest idle first), then the others by name."""
    now = now or timezone.now()
    heads = [
        SectionHead(slug=s.slug, title=s.title, order=s.order)
        for s in matrix.all_sections
        if any(group.slug == s.slug for group in matrix.sections)
    ]
    last_active = _last_active(cohort)
    failures = _recent_failures(cohort, now - dt.timedelta(days=AT_RISK_IDLE_DAYS))
    joined = {m.user_id: m.joined_at for m in cohort_members(cohort=cohort)}
    rows = []
    for row in matrix.rows:
        sections = []
        for head in heads:
            cells = [c for c in row.cells if c.lesson.section_slug == head.slug]
            done = sum(int(c.read) + c.checks_right + c.exercises_passed for c in cells)
            total = sum(
                1 + c.lesson.checks_total + c.lesson.exercises_total for c in cells
            )
            sections.append(SectionCompletion(head, done, total))
        active = last_active.get(row.user_id)
        count = failures.get(row.user_id, 0)
        rows.append(
            OverviewRow(
                user_id=row.user_id,
                username=row.username,
                sections=sections,
                last_active=active,
                failures=count,
                reasons=_risk_reasons(
                    last_active=active,
                    joined_at=joined.get(row.user_id, now),
                    failures=count,
                    now=now,
                ),
            )
        )
    oldest = dt.datetime.min.replace(tzinfo=dt.UTC)
    rows.sort(key=lambda r: r.username.lower())
    rows.sort(
        key=lambda r: (
            not r.at_risk,
            (r.last_active or oldest) if r.at_risk else oldest,
        )
    )
    return Overview(sections=heads, rows=rows)
