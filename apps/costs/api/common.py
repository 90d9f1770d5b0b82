"""What the costs API's answers share: the 422 for an input the model cannot use, the price a
request chose and how an answer states it.
"""

from __future__ import annotations

from django.http import HttpRequest

from apps.accounts.auth import optional_org
from apps.costs import selectors
from apps.costs.formulas import CostInputError, TierPrice, choose_price, readings_text, usd_per_mtok
from apps.costs.reference import PRICES_AS_OF, price_sets
from apps.costs.slo import Slo, SloCost


def request_book(request: HttpRequest) -> selectors.PriceBook:
    """The one price book (apps/costs/selectors.price_book) for an API request: the caller's
    organization's, over the reference set its `prices_as_of` asks for (a date or a set's
    name; the newest when none). One that names no set is a 422 naming prices_as_of."""
    return selectors.price_book(
        org=optional_org(request), prices_as_of=request.GET.get(PRICES_AS_OF, "")
    )


def request_price(
    request: HttpRequest, usd_per_gpu_hour: float | None, accelerator: str | None, tier: str | None
) -> TierPrice:
    book = request_book(request)
    return choose_price(book, usd_per_gpu_hour=usd_per_gpu_hour, accelerator=accelerator, tier=tier)


def side_prices(
    request: HttpRequest, query: object, accelerators: tuple[str | None, str | None]
) -> tuple[TierPrice, TierPrice]:
    """Sides A and B's prices from a query's usd_per_gpu_hour_a/_b and tier_a/_b, each
    with its side's accelerator; an unusable input names that side's field (tier_b ...)."""
    prices = []
    for side, accelerator in zip(("a", "b"), accelerators, strict=True):
        try:
            prices.append(
                request_price(
                    request,
                    getattr(query, f"usd_per_gpu_hour_{side}"),
                    accelerator,
                    getattr(query, f"tier_{side}"),
                )
            )
        except CostInputError as error:
            raise CostInputError(f"{error.field}_{side}", error.message) from None
    return prices[0], prices[1]


def set_named(citation: str) -> str | None:
    """The dated reference set a price's citation names (apps/costs/reference.py), if any."""
    named = citation.partition(":")[0]
    return named if named in {s.name for s in price_sets()} else None


def price_out(price: TierPrice) -> dict:
    """A price as every answer states it; a reference price names its dated set."""
    return {
        "usd_per_gpu_hour": price.usd_per_gpu_hour,
        "accelerator": price.accelerator,
        "tier": price.tier,
        "source": price.source,
        "citation": price.citation,
        "price_set": set_named(price.citation),
    }


def slo_cost_out(
    cost: SloCost,
    slo: Slo,
    price: TierPrice,
    *,
    tok_s_kind: str = "as given",
    readings: tuple[float, float] | None = None,
) -> dict:
    """`readings`: both tok/s readings of a figure of unstated kind (tok_s_kind "unstated")."""
    result = cost.result
    usd = None
    if readings:
        low, high = sorted(usd_per_mtok(price.usd_per_gpu_hour, r) for r in readings)
        usd = (low, high)
    return {
        "meets": result.meets,
        "tok_per_s_per_gpu": result.tok_per_s_per_gpu,
        "tok_s_kind": tok_s_kind,
        "tok_s_per_gpu_range": readings_text(readings),
        "usd_per_mtok_range": readings_text(usd),
        "provenance": result.provenance,
        "usd_per_mtok": cost.usd_per_mtok,
        "lower": result.lower.label if result.lower else None,
        "upper": result.upper.label if result.upper else None,
        "binding": result.binding.describe() if result.binding else None,
        "metrics": result.metrics,
        "reason": result.reason,
        "skipped": list(result.skipped),
        "slo": slo.describe(),
        "price": price_out(price),
    }


def kw_per_gpu(request: HttpRequest, accelerator: str | None, kw: float | None) -> float | None:
    if kw is not None:
        return kw
    if not accelerator:
        return None
    book = request_book(request).get(accelerator.strip().upper())
    return book.all_in_kw if book else None
