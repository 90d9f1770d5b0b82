"""The admin's pages for the catalog: accelerators, price tiers, models, engines, deployments,
scenarios."""

from django.contrib import admin

from apps.catalog.models import Accelerator, Deployment, Engine, Model, PriceTier, Scenario

for model in (Accelerator, PriceTier, Model, Engine, Deployment, Scenario):
    admin.site.register(model)
