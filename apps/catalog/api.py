"""/api/v1/scenarios: scenarios, listed and created. (/api/v1/accelerators, with their prices,
is the price book's: apps/costs/api/accelerators.py.)"""

from typing import Any

from django.http import HttpRequest
from ninja import Field, Router, Schema, Status

from apps.accounts.auth import BearerToken, optional_org
from apps.catalog import selectors
from apps.catalog.services import scenario_get_or_create
from workers.result_facts import Scenario as ScenarioIn

router = Router(tags=["catalog"])


class ScenarioOut(Schema):
    slug: str
    name: str
    is_preset: bool
    input_tokens: int
    output_tokens: int
    length_spread: float | None
    prefix_cache_hit_rate: float | None
    dataset: str
    arrival: str
    concurrency: list[int]
    slo_ttft_ms: float | None
    slo_ttft_percentile: float
    slo_tpot_ms: float | None
    slo_e2el_ms: float | None
    slo_bounds: list[dict[str, Any]] = Field(
        description="bounds beyond the legacy slo_* fields (metric, percentile, limit, unit)"
    )
    slo_min_success_rate: float


@router.get("/scenarios", response=list[ScenarioOut], summary="Scenarios and presets")
def list_scenarios(request: HttpRequest):
    return selectors.scenario_list(org=optional_org(request))


@router.post(
    "/scenarios",
    auth=BearerToken(),
    response={200: ScenarioOut, 201: ScenarioOut},
    summary="Create a scenario",
)
def create_scenario(request: HttpRequest, payload: ScenarioIn):
    """201 with the new scenario; 200 with the existing one when its shape is already known.

    A scenario made here is a workload to run, so what it leaves out takes the load
    generator's defaults (no length spread, no prefix reuse); only imports leave them unstated.
    """
    unstated = ("length_spread", "prefix_cache_hit_rate")
    payload = payload.model_copy(
        update={field: 0.0 for field in unstated if getattr(payload, field) is None}
    )
    scenario, created = scenario_get_or_create(scenario=payload, org=request.auth.org)
    return Status(201 if created else 200, scenario)
