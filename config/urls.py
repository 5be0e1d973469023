from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from config.health import healthz, sandbox_health
from grader import views as grader_views
from quiz import views as quiz_views
from quiz.figure_views import figure_svg

urlpatterns = [
    path("", quiz_views.home, name="home"),
    path("lessons/<slug:slug>/", quiz_views.lesson_detail, name="lesson"),
    path("exercises/<slug:slug>/", grader_views.exercise_detail, name="exercise"),
    path(
        "submissions/<uuid:submission_id>/",
        grader_views.submission_detail,
        name="submission",
    ),
    path("figures/<slug:name>.svg", figure_svg, name="figure"),
    path("accounts/signup/", quiz_views.signup, name="signup"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", include("quiz.learner_urls")),
    path("instructor/", include("quiz.instructor_urls")),
    path("cohorts/", include("quiz.cohort_urls")),
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    path("healthz/sandbox", sandbox_health, name="healthz-sandbox"),
    path("api/v1/", include("grader.api.urls")),
    path("api/v1/", include("quiz.api_urls")),
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
