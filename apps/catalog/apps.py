"""The catalog app: accelerators and their price tiers, models, engines, deployments, scenarios."""

from django.apps import AppConfig


class CatalogConfig(AppConfig):
    name = "apps.catalog"
    label = "catalog"
