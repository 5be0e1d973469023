from django.apps import AppConfig


class LmsConfig(AppConfig):
    name = "lms"
    verbose_name = "LMS (LTI 1.3)"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from lms.receivers import learners_changed
        from quiz.core.score_events import learner_scores_changed

        # Grades go out when work changes; the uid keeps a second ready() from
        # connecting it twice.
        learner_scores_changed.connect(learners_changed, dispatch_uid="lms-scores")
