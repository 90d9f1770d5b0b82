"""Reads for the catalog: accelerators, deployments and scenarios a caller may see."""

from django.db.models import Prefetch, Q, QuerySet

from apps.accounts.models import Organization
from apps.accounts.scoping import visible_to
from apps.catalog.models import Accelerator, Deployment, PriceTier, Scenario


def accelerator_list(*, org: Organization | None = None) -> QuerySet[Accelerator]:
    """Accelerators with the price tiers the caller may see: reference ones and their own."""
    visible = Q(org__isnull=True) | (Q(org=org) if org else Q(pk__in=[]))
    # A SKU first seen in another organization's private run stays unlisted: reference SKUs
    # (with a source or a reference price) and those of deployments the caller may see.
    listed = (
        ~Q(source="")
        | Q(pk__in=PriceTier.objects.filter(org__isnull=True).values("accelerator_id"))
        | Q(pk__in=deployments_visible(org=org).values("accelerator_id"))
    )
    if org is not None:
        listed |= Q(pk__in=PriceTier.objects.filter(org=org).values("accelerator_id"))
    return (
        Accelerator.objects.filter(listed)
        .distinct()
        .prefetch_related(
            Prefetch("prices", queryset=PriceTier.objects.filter(visible).order_by("tier"))
        )
    )


def scenario_list(*, org: Organization | None = None) -> QuerySet[Scenario]:
    """Curated and public scenarios, plus the caller's own; another organization's scenario
    is listed only once a public run uses it (its name is then public through that run)."""
    used = Scenario.objects.filter(visible_to(org, via="runs__")).values("pk")
    visible = Q(created_by__isnull=True) | Q(pk__in=used)
    if org is not None:
        visible |= Q(created_by=org)
    return Scenario.objects.filter(visible)


def deployments_visible(*, org: Organization | None) -> QuerySet[Deployment]:
    """Deployments whose facts the caller may read: those of a run it may see (public runs and
    its own) or of its own endpoints. Others' private deployments stay unknown (404)."""
    # Through the runs relation (runs_visible's rule, accounts.scoping.visible_to): the
    # catalog sits below the runs app and does not import it.
    run_on = Deployment.objects.filter(visible_to(org, via="runs__")).values("pk")
    own = Q(endpoints__org=org) if org is not None else Q(pk__in=[])
    return Deployment.objects.filter(Q(pk__in=run_on) | own).distinct()
