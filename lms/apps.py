from django.apps import AppConfig


class LmsConfig(AppConfig):
    name = "lms"
    verbose_name = "LMS (LTI 1.3)"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from lms import hooks

        hooks.connect()
