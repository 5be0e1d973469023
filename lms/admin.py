"""Admin: django-lti's registrations (with deployments), and what LMS sync did."""

from django import forms
from django.contrib import admin
from lti_tool.admin import LtiRegistrationAdmin
from lti_tool.models import LtiDeployment, LtiRegistration

from lms.models import LineItem, LinkScore, LmsAccount, LmsCourse, ScoreSync


@admin.register(LmsAccount)
class LmsAccountAdmin(admin.ModelAdmin):
    list_display = ["sub", "issuer", "user", "created_at"]
    search_fields = ["sub", "issuer", "user__username"]
    raw_id_fields = ["user"]


@admin.register(LmsCourse)
class LmsCourseAdmin(admin.ModelAdmin):
    list_display = ["context", "cohort", "roster_synced_at"]
    raw_id_fields = ["context", "cohort"]


@admin.register(LineItem)
class LineItemAdmin(admin.ModelAdmin):
    list_display = ["assignment", "quiz", "course", "url"]
    raw_id_fields = ["assignment", "quiz", "course"]


@admin.register(ScoreSync)
class ScoreSyncAdmin(admin.ModelAdmin):
    list_display = ["learner", "assignment", "quiz", "score", "version",
                    "sent_version", "failed", "sent_at"]  # fmt: skip
    list_filter = ["failed"]
    raw_id_fields = ["learner", "assignment", "quiz", "course"]
    readonly_fields = ["computed_at", "sent_at", "attempts", "last_error"]


@admin.register(LinkScore)
class LinkScoreAdmin(admin.ModelAdmin):
    """Scores for line items the LMS made (a refused one is listed as failed)."""

    list_display = ["learner", "target", "score", "version", "sent_version",
                    "failed", "sent_at"]  # fmt: skip
    list_filter = ["failed"]
    search_fields = ["target", "resource_link_id", "lms_user_id"]
    raw_id_fields = ["learner", "deployment"]
    readonly_fields = ["computed_at", "sent_at", "attempts", "last_error"]


# django-lti registers LtiRegistration with a deployments inline whose "is
# active" starts unticked; a deployment an admin types here is meant to work.
admin.site.unregister(LtiRegistration)


class DeploymentForm(forms.ModelForm):
    class Meta:
        model = LtiDeployment
        fields = ["deployment_id", "is_active"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk is None:
            self.fields["is_active"].initial = True


class DeploymentInline(admin.TabularInline):
    model = LtiDeployment
    form = DeploymentForm
    extra = 1


@admin.register(LtiRegistration)
class RegistrationAdmin(LtiRegistrationAdmin):
    inlines = [DeploymentInline]
    readonly_fields = ["uuid"]
