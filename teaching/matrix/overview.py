"""The cohort overview: per-section completion per learner, at-risk first.

The full matrix is dozens of lesson columns; an instructor first wants to
know who needs a message and where the cohort stands per section. This
reads the same Matrix as the page's detail table (so the numbers agree) plus
one query for every member's latest activity and recent failures.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from django.db.models import Count, Exists, Max, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from grader.models import Submission
from quiz.learning.models import LessonRead, QuestionAttempt
from teaching.matrix.build import Matrix
from teaching.models import Cohort, CohortMembership

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


def _latest(model, field: str):
    """The member's latest `field` in `model`, as a correlated subquery."""
    return Subquery(
        model.objects.filter(user_id=OuterRef("user_id"))
        .order_by()
        .values("user_id")
        .annotate(at=Max(field))
        .values("at")[:1]
    )


def _member_activity(cohort: Cohort, since: dt.datetime) -> list[dict]:
    """Per member, in one query: when they joined, their latest read,
    self-check answer and submission, and their failed grades since `since`
    on exercises they have not passed."""
    passed = Submission.objects.filter(
        user_id=OuterRef("user_id"),
        exercise_id=OuterRef("exercise_id"),
        status=Submission.Status.PASSED,
    )
    failures = (
        Submission.objects.filter(
            user_id=OuterRef("user_id"),
            status=Submission.Status.FAILED,
            created_at__gte=since,
        )
        .filter(~Exists(passed))
        .order_by()
        .values("user_id")
        .annotate(n=Count("pk"))
        .values("n")[:1]
    )
    return list(
        CohortMembership.objects.filter(cohort=cohort)
        .annotate(
            last_read=_latest(LessonRead, "last_read_at"),
            last_answer=_latest(QuestionAttempt, "created_at"),
            last_submission=_latest(Submission, "created_at"),
            failures=Coalesce(Subquery(failures), 0),
        )
        .values(
            "user_id",
            "joined_at",
            "last_read",
            "last_answer",
            "last_submission",
            "failures",
        )
    )


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
    since = now - dt.timedelta(days=AT_RISK_IDLE_DAYS)
    activity = {row["user_id"]: row for row in _member_activity(cohort, since)}
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
        member = activity.get(row.user_id, {})
        times = [
            member.get(key)
            for key in ("last_read", "last_answer", "last_submission")
            if member.get(key)
        ]
        active = max(times) if times else None
        count = member.get("failures") or 0
        rows.append(
            OverviewRow(
                user_id=row.user_id,
                username=row.username,
                sections=sections,
                last_active=active,
                failures=count,
                reasons=_risk_reasons(
                    last_active=active,
                    joined_at=member.get("joined_at") or now,
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
