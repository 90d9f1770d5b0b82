"""The regressions app: change points, subscriptions and alerts."""

from django.apps import AppConfig


class RegressionsConfig(AppConfig):
    name = "apps.regressions"
    default_auto_field = "django.db.models.BigAutoField"
