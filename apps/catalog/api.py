"""/api/v1/accelerators and /scenarios: accelerators with the price tiers a caller may see, and
scenarios (listed and created)."""

from typing import Any

from django.http import HttpRequest
from ninja import Field, Router, Schema, Status

from apps.accounts.auth import BearerToken, optional_org
from apps.catalog import selectors
from apps.catalog.services import scenario_get_or_create
from workers.result_facts import Scenario as ScenarioIn

router = Router(tags=["catalog"])


class TierPriceOut(Schema):
    tier: str
    usd_per_gpu_hour: float
    private: bool
    source: str


class AcceleratorOut(Schema):
    sku: str
    vendor: str
    pool: str
    hbm_gb: float | None
    board_power_w: float | None
    all_in_kw: float | None
    source: str
    prices: list[TierPriceOut]


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


@router.get("/accelerators", response=list[AcceleratorOut], summary="Accelerators and prices")
def list_accelerators(request: HttpRequest):
    """Each accelerator with its reference price tiers (and the caller's own price book)."""
    return [
        {
            "sku": a.sku,
            "vendor": a.vendor,
            "pool": a.pool,
            "hbm_gb": a.hbm_gb,
            "board_power_w": a.board_power_w,
            "all_in_kw": a.all_in_kw,
            "source": a.source,
            "prices": [
                {
                    "tier": p.tier,
                    "usd_per_gpu_hour": p.usd_per_gpu_hour,
                    "private": p.org_id is not None,
                    "source": p.source,
                }
                for p in a.prices.all()
            ],
        }
        for a in selectors.accelerator_list(org=optional_org(request))
    ]


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
