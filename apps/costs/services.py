"""Writes for the cost model: an organization's price profiles and saved pages."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet

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
        _within_budget(
            org,
            PriceProfile.objects.filter(org=org),
            replaces={"name": clean_name},
            most=settings.ORG_MAX_PRICE_PROFILES,
            what="price profiles",
            setting="ORG_MAX_PRICE_PROFILES",
        )
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
        _within_budget(
            org,
            SavedPage.objects.filter(org=org),
            replaces={"kind": kind, "name": clean_name},
            most=settings.ORG_MAX_SAVED_PAGES,
            what="saved pages",
            setting="ORG_MAX_SAVED_PAGES",
        )
        page, _ = SavedPage.objects.update_or_create(
            org=org, kind=kind, name=clean_name, defaults={"query": query, "created_by": user}
        )
    return page


def saved_page_delete(*, org: Organization, user: Any, slug: str) -> bool:
    """Delete one of the organization's saved pages (its permalink stops working); False when
    the organization has no page of that slug, another's included. Members and up, as saving
    (which can already replace any of them) is."""
    require_role(org, user, Role.MEMBER)
    if "\x00" in slug:  # in no slug, and PostgreSQL refuses one in a query
        return False
    deleted, _ = SavedPage.objects.filter(org=org, slug=slug).delete()
    return deleted > 0


def _within_budget(
    org: Organization,
    kept: QuerySet,
    *,
    replaces: dict[str, str],
    most: int,
    what: str,
    setting: str,
) -> None:
    """CostInputError on `name` when one more of what the organization keeps would pass its
    budget; replacing one (the same name) is always possible. Call inside the transaction
    that saves: it locks the organization's row, so two saves at once cannot both pass."""
    Organization.objects.select_for_update().filter(pk=org.pk).first()
    if not kept.filter(**replaces).exists() and kept.count() >= most:
        raise CostInputError(
            "name",
            f"your organization keeps {most} {what}, the most it may ({setting}); save under "
            "one of their names to replace it",
        )
