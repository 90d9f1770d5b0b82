from django.apps import AppConfig


class TrustConfig(AppConfig):
    name = "apps.trust"
    default_auto_field = "django.db.models.BigAutoField"
