from django.db.models import Prefetch, Q, QuerySet

from apps.accounts.models import Organization
from apps.catalog.models import Accelerator, PriceTier, Scenario


def accelerator_list(*, org: Organization | None = None) -> QuerySet[Accelerator]:
    """Accelerators with the price tiers the caller may see: reference ones and their own."""
    visible = Q(org__isnull=True) | (Q(org=org) if org else Q(pk__in=[]))
    return Accelerator.objects.prefetch_related(
        Prefetch("prices", queryset=PriceTier.objects.filter(visible).order_by("tier"))
    )


def scenario_list() -> QuerySet[Scenario]:
    return Scenario.objects.all()
