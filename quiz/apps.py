from django.apps import AppConfig


class QuizConfig(AppConfig):
    name = "quiz"
    verbose_name = "Course content"

    def ready(self) -> None:
        from django.db.models.signals import post_migrate

        from quiz.core.api.tokens import connect_signals
        from quiz.core.roles import ensure_roles
        from quiz.core.score_events import learner_scores_changed
        from quiz.teaching.quizzes.scoring import code_verdicts_heard

        # Permissions exist only after migrate has run, so roles follow it.
        post_migrate.connect(ensure_roles, sender=self)
        connect_signals()  # a password change revokes the user's API token
        # A verdict on a quiz's code question reaches its attempt; the uid
        # keeps a second ready() from connecting it twice.
        learner_scores_changed.connect(
            code_verdicts_heard, dispatch_uid="quiz-code-verdicts"
        )
