"""Reads behind the regressions page, its badges and the subscription page."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Q, QuerySet

from apps.accounts.models import Organization
from apps.regressions.models import ChangePoint, Subscription


@dataclass(frozen=True)
class Filters:
    model: str = ""
    accelerator: str = ""
    engine: str = ""
    organization: str = ""  # the slug of the organization whose runs the change is in
    direction: str = ""
    metric: str = ""
    scenario: str = ""
    deployment: int | None = None


def change_points_visible(*, org: Organization | None) -> QuerySet[ChangePoint]:
    """Current change points the caller may see: those found over public runs, and those of
    its own organization's series (which may hold its private runs)."""
    visible = Q(org__isnull=True)
    if org is not None:
        visible |= Q(org=org)
    return ChangePoint.objects.filter(visible, current=True).select_related(
        "deployment__model",
        "deployment__accelerator",
        "deployment__engine",
        "scenario",
        "before_run",
        "after_run__org",
    )


# Each text filter and the lookup it narrows by; an empty value leaves it out.
_TEXT_FILTERS = (
    ("model", "deployment__model__name__iexact"),
    ("accelerator", "deployment__accelerator__sku__iexact"),
    ("engine", "deployment__engine__name__iexact"),
    ("organization", "after_run__org__slug"),
    ("direction", "direction"),
    ("metric", "metric"),
    ("scenario", "scenario__slug"),
)


def change_point_list(*, org: Organization | None, filters: Filters) -> QuerySet[ChangePoint]:
    points = change_points_visible(org=org)
    for name, lookup in _TEXT_FILTERS:
        if value := getattr(filters, name):
            points = points.filter(**{lookup: value})
    if filters.deployment:
        points = points.filter(
            Q(deployment_id=filters.deployment) | Q(before_run__deployment_id=filters.deployment)
        )
    return points


def filter_choices(*, org: Organization | None) -> dict[str, list[str]]:
    points = change_points_visible(org=org)

    def values(field: str) -> list[str]:
        return sorted({v for v in points.values_list(field, flat=True).distinct() if v})

    return {
        "models": values("deployment__model__name"),
        "accelerators": values("deployment__accelerator__sku"),
        "engines": values("deployment__engine__name"),
        "organizations": values("after_run__org__slug"),
    }


def change_point_get(*, change_point_id: int, org: Organization | None) -> ChangePoint | None:
    return change_points_visible(org=org).filter(pk=change_point_id).first()


def regressions_by_deployment(
    *, deployment_ids: list[int] | None, org: Organization | None
) -> dict[int, list[ChangePoint]]:
    """The regressions where these deployments' series appear (all when None), newest first
    (the badges)."""
    found: dict[int, list[ChangePoint]] = {}
    points = change_points_visible(org=org).filter(direction=ChangePoint.Direction.REGRESSION)
    if deployment_ids is not None:
        points = points.filter(deployment_id__in=deployment_ids)
    columns = ("deployment_id", "metric", "relative", "relative_low", "relative_high", "direction")
    for cp in points.select_related(None).only(*columns, "last_before_at", "first_after_at"):
        found.setdefault(cp.deployment_id, []).append(cp)
    return found


def regressions_of_deployment(*, deployment_id: int, org: Organization | None) -> list[ChangePoint]:
    """Regressions whose first run after the change is of this deployment (its page marks
    those runs), oldest first."""
    points = change_points_visible(org=org).filter(
        deployment_id=deployment_id, direction=ChangePoint.Direction.REGRESSION
    )
    return list(points.order_by("first_after_at", "id"))


def regressions_of_run(*, run_id: int, org: Organization | None) -> list[ChangePoint]:
    """Change points this run begins (the first run after the change)."""
    return list(change_points_visible(org=org).filter(after_run_id=run_id))


def subscriptions_of(*, org: Organization) -> QuerySet[Subscription]:
    return Subscription.objects.filter(org=org).prefetch_related("alerts__deliveries")
