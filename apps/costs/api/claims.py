"""/costs/claim: a published cost claim checked against the stored runs."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Query, Router

from apps.api_errors import Errors
from apps.costs.api.common import price_out, request_book, side_prices
from apps.costs.api.schemas import ClaimOut, ClaimQuery
from apps.costs.claims import Claim, Comparison, check_claim, tier_pair_assumptions
from apps.costs.formulas import require_positive

router = Router()


@router.get("/claim", response={200: ClaimOut, 422: Errors}, summary="Check a published cost claim")
def claim(request: HttpRequest, query: Query[ClaimQuery]):
    """Cost ratio = (price A / price B) / throughput ratio, and every reference tier pairing.

    `?throughput_ratio=0.8&usd_per_gpu_hour_a=1.48&usd_per_gpu_hour_b=1.95&claimed_cost_ratio=0.5`
    gives 0.95: the claim does not hold.
    """
    price_a, price_b = side_prices(request, query, (query.accelerator_a, query.accelerator_b))
    stated = Claim(
        throughput_ratio=query.throughput_ratio,
        usd_per_gpu_hour_a=price_a.usd_per_gpu_hour,
        usd_per_gpu_hour_b=price_b.usd_per_gpu_hour,
        claimed_cost_ratio=query.claimed_cost_ratio,
        comparison=Comparison(query.comparison),
        label_a=query.accelerator_a or "A",
        label_b=query.accelerator_b or "B",
    )
    assumptions = []
    if query.accelerator_a and query.accelerator_b:
        book = request_book(request)
        require_positive("throughput_ratio", query.throughput_ratio)
        assumptions = tier_pair_assumptions(
            book, query.accelerator_a, query.accelerator_b, query.throughput_ratio
        )
    check = check_claim(stated, assumptions)
    return {
        "cost_ratio": check.cost_ratio,
        "holds": check.holds,
        "summary": check.summary(),
        "throughput_ratio_needed": check.throughput_ratio_needed,
        "usd_per_gpu_hour_a_needed": check.usd_per_gpu_hour_a_needed,
        "price_a": price_out(price_a),
        "price_b": price_out(price_b),
        "assumptions": [
            {
                "label": v.assumption.label,
                "kind": v.assumption.kind,
                "throughput_ratio": v.assumption.throughput_ratio,
                "usd_per_gpu_hour_a": v.assumption.usd_per_gpu_hour_a,
                "usd_per_gpu_hour_b": v.assumption.usd_per_gpu_hour_b,
                "cost_ratio": v.cost_ratio,
                "holds": v.holds,
            }
            for v in check.verdicts
        ],
    }
