"""The trust app: reviews for the official board, evidence bundles and public dumps."""

from django.apps import AppConfig


class TrustConfig(AppConfig):
    name = "apps.trust"
    default_auto_field = "django.db.models.BigAutoField"
