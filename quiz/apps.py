from django.apps import AppConfig


class QuizConfig(AppConfig):
    name = "quiz"
    verbose_name = "Course content"

    def ready(self) -> None:
        from django.db.models.signals import post_migrate

        from quiz.core.api.tokens import connect_signals
        from quiz.core.roles import ensure_roles

        # Permissions exist only after migrate has run, so roles follow it.
        post_migrate.connect(ensure_roles, sender=self)
        connect_signals()  # a password change revokes the user's API token
