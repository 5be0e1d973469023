"""Cohorts in the admin, members inline; every edit audited."""

from django.contrib import admin

from quiz.core.audit import AuditedAdminMixin
from quiz.teaching.models import Cohort, CohortMembership


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
