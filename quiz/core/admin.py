"""The audit trail (read-only, for everyone) and API tokens in the admin."""

from django.contrib import admin
from django.utils.html import format_html, format_html_join

from quiz.core.models import ApiToken, AuditEntry


@admin.register(AuditEntry)
class AuditEntryAdmin(admin.ModelAdmin):
    """The trail is evidence: nobody, superusers included, may edit it here."""

    list_display = ["created_at", "actor_name", "action", "model", "object_repr"]
    list_filter = [
        "action",
        "model",
        ("actor", admin.RelatedOnlyFieldListFilter),
    ]
    list_select_related = ["actor"]
    search_fields = ["object_repr", "object_id", "model", "actor__username"]
    date_hierarchy = "created_at"
    fields = [
        "created_at",
        "actor",
        "action",
        "model",
        "object_id",
        "object_repr",
        "changes_table",
    ]
    readonly_fields = fields

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.display(description="Actor", ordering="actor__username")
    def actor_name(self, obj: AuditEntry) -> str:
        return obj.actor.get_username() if obj.actor else "(command)"

    @admin.display(description="Changes (old → new)")
    def changes_table(self, obj: AuditEntry):
        if not obj.changes:
            return "—"
        rows = format_html_join(
            "",
            "<tr><th>{}</th><td>{}</td><td>{}</td></tr>",
            (
                (name, _shown(pair[0]), _shown(pair[1]))
                for name, pair in obj.changes.items()
            ),
        )
        return format_html(
            "<table><thead><tr><th>field</th><th>old</th><th>new</th></tr></thead>"
            "<tbody>{}</tbody></table>",
            rows,
        )


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Each client's token: seen and revoked (deleted) here, never created or
    read back (only its hash is stored), as on a learner's account page."""

    list_display = ["name", "user", "prefix", "scopes", "created_at", "last_used_at"]
    list_select_related = ["user"]
    search_fields = ["name", "prefix", "user__username"]
    fields = ["user", "name", "prefix", "scopes", "created_at", "last_used_at"]
    readonly_fields = fields

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


def _shown(value) -> str:
    return "—" if value is None else str(value)
