"""Cohorts in the admin, members inline; every edit audited."""

from django.contrib import admin

from quiz.core.audit import AuditedAdminMixin
from teaching.models import Cohort, CohortMembership
from teaching.quizzes.models import Quiz, QuizAttempt, QuizSlot


class CohortMembershipInline(admin.TabularInline):
    model = CohortMembership
    extra = 0
    autocomplete_fields = ["user"]
    readonly_fields = ["joined_at"]


@admin.register(Cohort)
class CohortAdmin(AuditedAdminMixin, admin.ModelAdmin):
    list_display = ["name", "owner", "join_code", "member_count", "created_at"]
    list_select_related = ["owner"]
    search_fields = ["name", "join_code", "owner__username"]
    autocomplete_fields = ["owner"]
    readonly_fields = ["created_at"]
    inlines = [CohortMembershipInline]

    @admin.display(description="Members")
    def member_count(self, obj: Cohort) -> int:
        return obj.memberships.count()


class QuizSlotInline(admin.TabularInline):
    model = QuizSlot
    extra = 0


@admin.register(Quiz)
class QuizAdmin(AuditedAdminMixin, admin.ModelAdmin):
    """Quizzes; their slots inline (an attempt keeps what it drew)."""

    list_display = ["title", "cohort", "opens_at", "closes_at", "time_limit"]
    list_select_related = ["cohort"]
    search_fields = ["title", "cohort__name"]
    readonly_fields = ["created_at", "updated_at"]
    inlines = [QuizSlotInline]


@admin.register(QuizAttempt)
class QuizAttemptAdmin(admin.ModelAdmin):
    """Read-only: attempts change through the service (timing, audit)."""

    list_display = ["quiz", "learner", "number", "state", "score", "started_at"]
    list_select_related = ["quiz", "learner"]
    list_filter = ["state", "preview"]
    search_fields = ["learner__username", "quiz__title"]

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_add_permission(self, request) -> bool:
        return False
