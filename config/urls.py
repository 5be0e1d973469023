from django.contrib import admin
from django.urls import include, path, re_path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from config.health import healthz, sandbox_health
from config.metrics import metrics_view

urlpatterns = [
    path("", include("quiz.learning.urls")),
    path("", include("grader.urls")),
    path("", include("quiz.content.urls")),
    path("", include("quiz.core.urls")),
    path("", include("teaching.urls")),
    path("", include("lms.urls")),
    # Diagnosis moved from the grader app to quiz; old admin links still work.
    re_path(
        r"^admin/grader/diagnosis/(?P<rest>.*)$",
        RedirectView.as_view(url="/admin/quiz/diagnosis/%(rest)s", query_string=True),
    ),
    # Cohorts and quizzes moved from quiz to teaching; old admin links still work.
    re_path(
        r"^admin/quiz/(?P<model>cohort|quiz|quizattempt)/(?P<rest>.*)$",
        RedirectView.as_view(
            url="/admin/teaching/%(model)s/%(rest)s", query_string=True
        ),
    ),
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    path("metrics", metrics_view, name="metrics"),
    path("healthz/sandbox", sandbox_health, name="healthz-sandbox"),
    path("api/v1/", include("quiz.core.api.urls")),
    path("api/v1/", include("grader.api.urls")),
    path("api/v1/", include("teaching.api.urls")),
    path("api/v1/schema/", SpectacularAPIView.as_view(), name="schema"),
    path(
        "api/v1/docs/",
        SpectacularSwaggerSplitView.as_view(url_name="schema"),
        name="api-docs",
    ),
]

handler400 = "config.errors.bad_request"
handler403 = "config.errors.permission_denied"
handler404 = "config.errors.not_found"
handler500 = "config.errors.server_error"
