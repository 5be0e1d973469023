from django.apps import AppConfig


class TeachingConfig(AppConfig):
    name = "teaching"
    label = "teaching"
    verbose_name = "Teaching"

    def ready(self) -> None:
        from django.db.models.signals import post_migrate

        from quiz.core.roles import ensure_roles
        from quiz.core.score_events import learner_scores_changed
        from teaching.quizzes.scoring import code_verdicts_heard

        # Teaching's permissions exist only after its own post_migrate has
        # made them, so the roles are brought up to date after it too.
        post_migrate.connect(ensure_roles, sender=self)
        # A verdict on a quiz's code question reaches its attempt; the uid
        # keeps a second ready() from connecting it twice.
        learner_scores_changed.connect(
            code_verdicts_heard, dispatch_uid="quiz-code-verdicts"
        )
