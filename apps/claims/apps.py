"""The claims app: published cost claims, re-priced as price sets change and checked against
the stored runs, with subscriptions told when one flips."""

from django.apps import AppConfig


class ClaimsConfig(AppConfig):
    name = "apps.claims"
    default_auto_field = "django.db.models.BigAutoField"
