"""/costs/slo: the cost of a measured curve at an SLO, from points given in the body."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Router

from apps.api_errors import Errors
from apps.costs.api.common import request_price, slo_cost_out
from apps.costs.api.schemas import SloCostIn, SloCostOut
from apps.costs.slo import SloPoint, cost_at_slo

router = Router()


@router.post(
    "/slo",
    response={200: SloCostOut, 422: Errors},
    summary="Best throughput and $/Mtok at an SLO",
)
def slo_cost(request: HttpRequest, payload: SloCostIn):
    """Highest throughput per GPU meeting the SLO, interpolated along the Pareto front."""
    price = request_price(request, payload.usd_per_gpu_hour, payload.accelerator, payload.tier)
    slo = payload.slo.slo()
    points = [
        SloPoint(p.label or f"#{i}", p.tok_per_s_per_gpu, dict(p.metrics), p.success_rate)
        for i, p in enumerate(payload.points)
    ]
    cost = cost_at_slo(points, slo, price.usd_per_gpu_hour)
    return slo_cost_out(cost, slo, price)
