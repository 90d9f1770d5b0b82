"""The economics app: pages and API over measured points, priced by apps/costs."""

from django.apps import AppConfig


class EconomicsConfig(AppConfig):
    name = "apps.economics"
    label = "economics"
    verbose_name = "Economics"
