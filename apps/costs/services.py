"""Writes for the cost model: an organization's price profiles and saved pages."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.db import transaction

from apps.accounts.models import Organization, Role
from apps.accounts.scoping import require_role
from apps.costs.formulas import CostInputError, require_non_negative
from apps.costs.models import PriceProfile, SavedPage

MAX_NAME = 100


def _name(value: str) -> str:
    name = (value or "").strip()
    if not name:
        raise CostInputError("name", "is required")
    if len(name) > MAX_NAME:
        raise CostInputError("name", f"must be at most {MAX_NAME} characters")
    return name


def _price(field: str, value: float | None) -> float | None:
    """A price is refused by the cost model's rule, in the words the forms use."""
    return None if value is None else require_non_negative(field, value)


def price_profile_save(
    *,
    org: Organization,
    user: Any,
    name: str,
    usd_per_gpu_hour: Mapping[str, float],
    sell_input_usd_per_mtok: float | None = None,
    sell_output_usd_per_mtok: float | None = None,
    sell_cached_input_usd_per_mtok: float | None = None,
    active: bool = True,
) -> PriceProfile:
    """Create or replace the organization's profile of that name; when `active`, it becomes
    the one every page prices with (the others stop being active). Members and up."""
    require_role(org, user, Role.MEMBER)
    clean_name = _name(name)
    prices = {
        sku.strip().upper(): _price(f"price_{sku}", float(price))
        for sku, price in usd_per_gpu_hour.items()
    }
    if not prices:
        raise CostInputError("price", "give at least one accelerator's own $/GPU-hr")
    sells = {
        "sell_input_usd_per_mtok": _price("sell_input_usd_per_mtok", sell_input_usd_per_mtok),
        "sell_output_usd_per_mtok": _price("sell_output_usd_per_mtok", sell_output_usd_per_mtok),
        "sell_cached_input_usd_per_mtok": _price(
            "sell_cached_input_usd_per_mtok", sell_cached_input_usd_per_mtok
        ),
    }
    with transaction.atomic():
        if active:
            PriceProfile.objects.filter(org=org, active=True).exclude(name=clean_name).update(
                active=False
            )
        profile, _ = PriceProfile.objects.update_or_create(
            org=org,
            name=clean_name,
            defaults={"usd_per_gpu_hour": prices, "active": active, "created_by": user, **sells},
        )
    return profile


def price_profile_activate(*, org: Organization, user: Any, name: str) -> PriceProfile | None:
    """Make the named profile the active one; an empty name switches profiles off."""
    require_role(org, user, Role.MEMBER)
    with transaction.atomic():
        PriceProfile.objects.filter(org=org, active=True).update(active=False)
        if not name.strip():
            return None
        profile = PriceProfile.objects.filter(org=org, name=name.strip()).first()
        if profile is None:
            raise CostInputError("profile", f"no profile named {name.strip()!r}")
        profile.active = True
        profile.save(update_fields=["active", "updated_at"])
    return profile


def saved_page_save(*, org: Organization, user: Any, name: str, kind: str, query: str) -> SavedPage:
    """Save (or replace) a named workload or comparison: the query that reproduces it."""
    require_role(org, user, Role.MEMBER)
    if kind not in SavedPage.Kind.values:
        raise CostInputError("kind", f"must be one of {', '.join(SavedPage.Kind.values)}")
    clean_name = _name(name)
    with transaction.atomic():
        # The organization's row, locked: two saves at once cannot both pass the budget.
        Organization.objects.select_for_update().filter(pk=org.pk).first()
        pages = SavedPage.objects.filter(org=org)
        most = settings.ORG_MAX_SAVED_PAGES
        replaces = pages.filter(kind=kind, name=clean_name).exists()
        if not replaces and pages.count() >= most:
            raise CostInputError(
                "name",
                f"your organization keeps {most} saved pages, the most it may "
                "(ORG_MAX_SAVED_PAGES); save under one of their names to replace it",
            )
        page, _ = SavedPage.objects.update_or_create(
            org=org, kind=kind, name=clean_name, defaults={"query": query, "created_by": user}
        )
    return page
