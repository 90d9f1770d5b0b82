"""The cost model app: price profiles and saved procurement pages."""

from django.apps import AppConfig


class CostsConfig(AppConfig):
    name = "apps.costs"
    label = "costs"
    verbose_name = "Cost model"
