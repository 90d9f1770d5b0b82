from django.apps import AppConfig


class RegressionsConfig(AppConfig):
    name = "apps.regressions"
    default_auto_field = "django.db.models.BigAutoField"
