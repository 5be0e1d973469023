from django.apps import AppConfig


class GraderConfig(AppConfig):
    name = "grader"
    verbose_name = "Auto-grader"

    def ready(self) -> None:
        from grader.api.tokens import connect_signals

        connect_signals()  # a password change revokes the user's API token
