"""The one price reader: which $/GPU-hr each accelerator costs for this visitor.

Every page that shows money (leaderboard, run, deployment, /compare/, /costs/, exports)
asks here, so a price profile changes them all alike. Own prices come from, in order:

1. the active price profile of the visitor's organization (members only), then
2. `price_<SKU>=<$/GPU-hr>` in the URL, which anyone may give (an anonymous visitor's
   profile, and what a permalink carries so it reproduces the page without an account).

Accelerators without an own price keep the chosen reference tier's price. Which reference
prices: the dated set a page is asked for (`prices_as_of=<date or set name>`, read here by
`asked_price_set`), the newest by default (apps/costs/reference.py).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from django.http import HttpRequest

from apps.accounts.models import Organization
from apps.accounts.scoping import current_org
from apps.costs.formulas import CostInputError
from apps.costs.reference import PRICES_AS_OF, PriceSet, price_set

PRICE_PREFIX = "price_"


@dataclass(frozen=True, slots=True)
class PriceSheet:
    """Own $/GPU-hr by SKU (upper case) and where they came from."""

    own: dict[str, float]
    profile: str = ""  # the organization's active profile's name, if any
    from_url: frozenset[str] = frozenset()

    def describe(self, tier_label: str) -> str:
        """What priced what, in words the page shows."""
        if not self.own:
            return f"{tier_label} reference tier for every accelerator"
        parts = []
        if self.profile:
            parts.append(f"profile “{self.profile}”")
        if self.from_url:
            parts.append("prices in the link")
        skus = ", ".join(f"{sku} ${price:g}/GPU-hr" for sku, price in sorted(self.own.items()))
        return f"{' + '.join(parts)} ({skus}); other accelerators: {tier_label} reference tier"

    def pairs(self) -> tuple[tuple[str, float], ...]:
        return tuple(sorted(self.own.items()))


@dataclass(frozen=True, slots=True)
class AskedPriceSet:
    """A page's `prices_as_of`: what to price with (the value, or "" for the newest), the set
    that prices, and why a value was not used ("" when it was)."""

    value: str
    price_set: PriceSet
    problem: str = ""


def asked_price_set(query: Mapping[str, str]) -> AskedPriceSet:
    """The reference price set a page's query asks for; one it cannot use is said and the
    newest set prices the page instead (the API refuses it: 422 naming prices_as_of)."""
    value = (query.get(PRICES_AS_OF) or "").strip()
    try:
        return AskedPriceSet(value, price_set(value))
    except CostInputError as exc:
        return AskedPriceSet("", price_set(), f"{exc.message}; priced with the newest set")


def url_prices(query: Mapping[str, str]) -> dict[str, float]:
    """`price_<SKU>` query values that are finite, non-negative numbers (others are left to
    the page that validates its own form, /costs/, to name)."""
    found: dict[str, float] = {}
    for name in query:
        if not name.startswith(PRICE_PREFIX):
            continue
        text = (query.get(name) or "").strip().replace(",", "")
        try:
            value = float(text)
        except ValueError:
            continue
        if math.isfinite(value) and value >= 0:
            found[name.removeprefix(PRICE_PREFIX).upper()] = value
    return found


def profile_prices(org: Organization | None) -> tuple[str, dict[str, float]]:
    """The organization's active profile: its name and $/GPU-hr by SKU."""
    if org is None:
        return "", {}
    from apps.costs.models import PriceProfile

    profile = PriceProfile.objects.filter(org=org, active=True).first()
    if profile is None:
        return "", {}
    prices = {
        str(sku).upper(): float(price)
        for sku, price in (profile.usd_per_gpu_hour or {}).items()
        if isinstance(price, int | float)
    }
    return profile.name, prices


def profile_sell_prices(org: Organization | None) -> dict[str, float | None]:
    """The $/Mtok the organization's active profile sells tokens at, by /costs/ field."""
    if org is None:
        return {}
    from apps.costs.models import PriceProfile

    profile = PriceProfile.objects.filter(org=org, active=True).first()
    if profile is None:
        return {}
    return {
        "sell_input_usd_per_mtok": profile.sell_input_usd_per_mtok,
        "sell_cached_input_usd_per_mtok": profile.sell_cached_input_usd_per_mtok,
        "sell_output_usd_per_mtok": profile.sell_output_usd_per_mtok,
    }


def price_sheet(request: HttpRequest) -> PriceSheet:
    """This visitor's own prices: their organization's profile, then the URL's on top."""
    return org_price_sheet(current_org(request), request.GET)


def org_price_sheet(org: Organization | None, query: Mapping[str, str]) -> PriceSheet:
    """An organization's profile prices with a query's `price_<SKU>` on top (price_sheet's,
    for a caller known by its token: the MCP server, apps/agents)."""
    name, own = profile_prices(org)
    linked = url_prices(query)
    return PriceSheet(own={**own, **linked}, profile=name, from_url=frozenset(linked))


def prices_by_accelerator_id(own: Mapping[str, float]) -> dict[int, float]:
    """Own prices keyed as the leaderboard's reference prices are (accelerator id)."""
    if not own:
        return {}
    from apps.catalog.models import Accelerator

    wanted = {sku.upper(): price for sku, price in own.items()}
    return {
        pk: wanted[sku.upper()]
        for pk, sku in Accelerator.objects.values_list("pk", "sku")
        if sku.upper() in wanted
    }


# In a permalink: price with the link's prices only, not the opener's organization's profile,
# so everyone who opens it sees the same numbers.
LINK_ONLY = ("prices_from", "link")


@dataclass(frozen=True, slots=True)
class ProfiledQuery:
    params: dict[str, str]
    profile: str = ""
    profile_skus: frozenset[str] = frozenset()  # the SKUs whose price the profile gave


def with_profile_prices(query: Mapping[str, str], org: Organization | None) -> ProfiledQuery:
    """A /costs/-style query with the organization's active profile under it as
    `price_<SKU>` fields (the URL's own prices win; a permalink's, `prices_from=link`, stand
    alone), with the profile's name and the SKUs it priced."""
    params = {name: query.get(name) or "" for name in query}
    if params.get(LINK_ONLY[0]) == LINK_ONLY[1]:
        return ProfiledQuery(params)
    name, own = profile_prices(org)
    for field, value in profile_sell_prices(org).items():
        if value is not None and not params.get(field):
            params[field] = f"{value:g}"
    typed = {k.removeprefix(PRICE_PREFIX).upper() for k in params if k.startswith(PRICE_PREFIX)}
    given = set()
    for sku, price in own.items():
        if sku not in typed:
            params[f"{PRICE_PREFIX}{sku}"] = f"{price:g}"
            given.add(sku)
    return ProfiledQuery(params, name, frozenset(given))
