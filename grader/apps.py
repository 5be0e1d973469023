from django.apps import AppConfig


class GraderConfig(AppConfig):
    name = "grader"
    verbose_name = "Auto-grader"

    def ready(self) -> None:
        from grader import hooks

        hooks.connect()  # exercises into content's loader, submissions into progress
