from django.urls import path

from lms import views

urlpatterns = [
    path("lti/login/", views.oidc_login, name="lti-login"),
    path("lti/launch/", views.launch, name="lti-launch"),
    path("lti/jwks/", views.jwks, name="lti-jwks"),
    path("lti/deep-link/", views.deep_link, name="lti-deep-link"),
    path("lti/courses/", views.course_list, name="lti-courses"),
    path(
        "lti/courses/<int:course_id>/roster/",
        views.roster_sync,
        name="lti-roster-sync",
    ),
]
