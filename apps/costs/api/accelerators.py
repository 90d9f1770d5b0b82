"""GET /api/v1/accelerators: each accelerator with the prices and all-in power the one price
book gives it (apps/costs/selectors.price_book): the dated reference set in force on
`prices_as_of` (the newest by default), each price naming its set, and the caller's own."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Field, Query, Router, Schema

from apps.accounts.auth import optional_org
from apps.catalog.selectors import accelerator_list
from apps.costs.api.common import request_book, set_named
from apps.costs.selectors import ORG_PRICE_SOURCE

router = Router(tags=["catalog"])


class TierPriceOut(Schema):
    tier: str
    usd_per_gpu_hour: float
    private: bool
    source: str
    price_set: str | None = Field(None, description="the dated reference set that stated it")


class AcceleratorOut(Schema):
    sku: str
    vendor: str
    pool: str
    hbm_gb: float | None
    board_power_w: float | None
    all_in_kw: float | None = Field(description="all-in kW per GPU, from the same set")
    source: str
    prices: list[TierPriceOut]


class AcceleratorsQuery(Schema):
    prices_as_of: str = Field(
        "", description="the reference price set: a date (YYYY-MM-DD) or a set's name; newest"
    )


@router.get("/accelerators", response=list[AcceleratorOut], summary="Accelerators and prices")
def list_accelerators(request: HttpRequest, query: Query[AcceleratorsQuery]):
    """Each accelerator with the price book's tiers for it (reference, then the caller's own)."""
    book = request_book(request)
    out = []
    for a in accelerator_list(org=optional_org(request)):
        entry = book.get(a.sku)
        prices = entry.usd_per_gpu_hour if entry else {}
        out.append(
            {
                "sku": a.sku,
                "vendor": a.vendor,
                "pool": a.pool,
                "hbm_gb": a.hbm_gb,
                "board_power_w": a.board_power_w,
                "all_in_kw": entry.all_in_kw if entry else a.all_in_kw,
                "source": a.source,
                "prices": [
                    {
                        "tier": tier,
                        "usd_per_gpu_hour": usd,
                        "private": entry.sources.get(tier) == ORG_PRICE_SOURCE,
                        "source": entry.citations.get(tier, ""),
                        "price_set": set_named(entry.citations.get(tier, "")),
                    }
                    for tier, usd in sorted(prices.items())
                    if entry is not None
                ],
            }
        )
    return out
