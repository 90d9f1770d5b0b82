"""/costs/capacity: how many GPUs each candidate needs for a workload, cheapest first."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Router

from apps.api_errors import Errors
from apps.costs.api.common import price_out, request_price
from apps.costs.api.schemas import CapacityIn, PlanOut
from apps.costs.capacity import Candidate, ScenarioShape, rank_plans
from apps.costs.formulas import CostInputError, TierPrice, TokenKind

router = Router()

# The fields a candidate takes from the request as they are; the rest are priced or parsed.
CANDIDATE_AS_GIVEN = {
    "label",
    "accelerator",
    "tok_per_s_per_gpu",
    "gpus_per_replica",
    "gpus_per_node",
    "throughput_provenance",
}


@router.post(
    "/capacity",
    response={200: list[PlanOut], 422: Errors},
    summary="GPUs, nodes and $/month per deployment, cheapest first",
)
def capacity(request: HttpRequest, payload: CapacityIn):
    candidates = []
    prices: dict[str, TierPrice] = {}
    for index, c in enumerate(payload.candidates):
        try:
            price = request_price(request, c.usd_per_gpu_hour, c.accelerator, c.tier)
        except CostInputError as error:
            raise CostInputError(f"candidates[{index}].{error.field}", error.message) from None
        prices[c.label] = price
        shape = None
        if c.scenario_input_tokens and c.scenario_output_tokens:
            shape = ScenarioShape(
                c.scenario_input_tokens,
                c.scenario_output_tokens,
                c.scenario_cache_hit_rate or 0.0,
            )
        candidates.append(
            Candidate(
                **c.model_dump(include=CANDIDATE_AS_GIVEN),
                token_kind=TokenKind(c.token_kind),
                usd_per_gpu_hour=price.usd_per_gpu_hour,
                price_label=price.source,
                scenario=shape,
            )
        )
    plans = rank_plans(payload.workload, candidates)
    return [
        {
            "label": plan.candidate.label,
            "accelerator": plan.candidate.accelerator,
            "feasible": plan.feasible,
            "peak_requests_per_s": plan.peak_requests_per_s,
            "requests_per_s_per_gpu": plan.requests_per_s_per_gpu,
            "replicas": plan.replicas,
            "gpus": plan.gpus,
            "nodes": plan.nodes,
            "peak_utilization": plan.peak_utilization,
            "usd_per_month": plan.usd_per_month,
            "usd_per_mtok_served": plan.usd_per_mtok_served,
            "warnings": list(plan.warnings),
            "reason": plan.reason,
            "price": price_out(prices[plan.candidate.label]),
        }
        for plan in plans
    ]
