"""Content routes (generated figures), included at the site root."""

from django.urls import path

from quiz.content.views import figure_svg

urlpatterns = [
    path("figures/<slug:name>.svg", figure_svg, name="figure"),
]
