from django.apps import AppConfig


class GraderConfig(AppConfig):
    name = "grader"
    verbose_name = "Auto-grader"
