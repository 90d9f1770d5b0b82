"""The costs API's request and response schemas, every topic's."""

from __future__ import annotations

from typing import Any, Literal

from ninja import Field, Schema
from pydantic import ConfigDict, field_validator

from apps.api_params import (
    STRICT_BODY,
    DivisorUsdPerGpuHour,
    Finite,
    Gpus,
    Input,
    KwPerGpu,
    NonNegativeMetric,
    Ratio,
    RowId,
    Share,
    SloSeconds,
    SloTokPerS,
    Tokens,
    TokPerS,
    UsdPerGpuHour,
    UsdPerMtok,
    Weight,
)
from apps.costs.capacity import Workload
from apps.costs.slo import Slo
from apps.costs.slo_query import PERCENTILE, PERCENTILE_FIELDS, stored_percentile


def name_field() -> Any:
    """An accelerator SKU or a price tier's name, optional: looked up, so never empty."""
    return Field(None, min_length=1, max_length=100)


class PriceOut(Schema):
    usd_per_gpu_hour: float
    accelerator: str
    tier: str
    source: str = Field(description="where the price came from")
    citation: str = Field("", description="the reference it cites, if any")
    price_set: str | None = Field(
        None, description="the dated reference price set that stated it (a reference price)"
    )


# --- $/Mtok --------------------------------------------------------------------------------


class PriceQuery(Input):
    model_config = ConfigDict(allow_inf_nan=False)  # nan, inf: a 422 naming the field

    usd_per_gpu_hour: UsdPerGpuHour | None = Field(None, description="your own $/GPU-hr")
    accelerator: str | None = Field(
        None, min_length=1, max_length=100, description="SKU, to price from a tier instead"
    )
    tier: str | None = Field(
        None,
        min_length=1,
        max_length=100,
        description="owning_hyperscaler, owning_neocloud, rental_3yr or your own tier",
    )
    prices_as_of: str = Field(
        "", description="the reference price set: a date (YYYY-MM-DD) or a set's name; newest"
    )


class MtokQuery(PriceQuery):
    tok_per_s: TokPerS = Field(description="throughput of the whole deployment, all its GPUs")
    gpus: Gpus = Field(1, description="GPUs the throughput was measured on")
    token_kind: Literal["input", "output", "total", "unlabelled"] = Field(
        "total", description="which tokens tok_per_s counts (echoed, for the record)"
    )
    kw_per_gpu: KwPerGpu | None = Field(
        None, description="all-in kW per GPU for energy figures (default: the accelerator's)"
    )


class MtokOut(Schema):
    usd_per_mtok: float
    token_kind: str
    tok_per_s: float
    gpus: int
    tok_per_s_per_gpu: float
    usd_per_hour: float = Field(description="the whole deployment")
    price: PriceOut
    kw_per_gpu: float | None
    joules_per_token: float | None
    tok_per_s_per_mw: float | None


class KindsQuery(PriceQuery):
    input_tok_per_s: TokPerS = Field(description="whole deployment")
    output_tok_per_s: TokPerS = Field(description="whole deployment")
    gpus: Gpus = 1
    mix_input: Weight = Field(3.0, description="input weight of the blend")
    mix_output: Weight = Field(1.0, description="output weight of the blend")
    cached_input_usd_per_mtok: UsdPerMtok | None = Field(
        None, description="price cached input tokens apart at this $/Mtok"
    )
    cached_input_share: Finite = Field(
        0.0, ge=0, lt=1, description="share of input tokens from the cache"
    )


class KindsOut(Schema):
    input: float
    output: float
    total: float
    blended: float
    mix: str
    cached_input: float | None
    uncached_input: float | None
    price: PriceOut


# --- $/GPU-hr ------------------------------------------------------------------------------


class GpuHourQuery(Input):
    model_config = ConfigDict(allow_inf_nan=False)  # nan, inf: a 422 naming the field

    gpu_purchase_usd: Finite = Field(ge=0, le=1e9)
    server_share_usd: Finite = Field(
        0.0, ge=0, le=1e9, description="this GPU's share of the server"
    )
    depreciation_years: Finite = Field(4.0, ge=0.1, le=100)
    kw_per_gpu: Finite = Field(ge=0, le=1000, description="all-in kW per GPU")
    usd_per_kwh: Finite = Field(ge=0, le=1000)
    pue: Finite = Field(
        1.0, ge=1, le=10, description="1.0 when kw_per_gpu already includes the facility"
    )
    hosting_usd_per_month: Finite = Field(0.0, ge=0, le=1e9)
    utilization: Finite = Field(1.0, ge=1e-3, le=1)


class GpuHourOut(Schema):
    usd_per_gpu_hour: float
    depreciation: float
    power: float
    hosting: float
    utilization: float


# --- cost at an SLO ------------------------------------------------------------------------


class SloIn(Input):
    """An SLO, in a query string or a body: bounds in s (tok/s/user for interactivity),
    percentiles spelled p50, p90, p95, p99 or p99.9, and a minimum success rate."""

    model_config = ConfigDict(allow_inf_nan=False)  # nan, inf: a 422 naming the field

    ttft_s_max: SloSeconds | None = None
    ttft_percentile: str = Field("p99", json_schema_extra=PERCENTILE)
    interactivity_min: SloTokPerS | None = Field(None, description="tok/s/user")
    interactivity_percentile: str = Field("p50", json_schema_extra=PERCENTILE)
    tpot_s_max: SloSeconds | None = None
    tpot_percentile: str = Field("p50", json_schema_extra=PERCENTILE)
    e2el_s_max: SloSeconds | None = None
    e2el_percentile: str = Field("p99", json_schema_extra=PERCENTILE)
    min_success_rate: Share = Field(0.99, description="a point with fewer successes misses")

    _percentiles = field_validator(*PERCENTILE_FIELDS)(stored_percentile)

    def slo(self) -> Slo:
        return Slo.of(**{name: getattr(self, name) for name in SloIn.model_fields})


class PointIn(Input):
    model_config = STRICT_BODY

    label: str = Field("", max_length=200)
    tok_per_s_per_gpu: TokPerS
    metrics: dict[str, NonNegativeMetric] = Field(
        description='keys like "ttft_s.p99", "interactivity.p50", "tpot_s.p50", "e2el_s.p999"'
    )
    success_rate: Share | None = Field(
        None, description="succeeded / total; without it the SLO cannot be checked"
    )


class SloBodyIn(SloIn):
    """An SLO in a JSON body: its numbers are JSON numbers."""

    model_config = STRICT_BODY


class SloCostIn(Input):
    model_config = STRICT_BODY

    points: list[PointIn] = Field(max_length=10_000)
    slo: SloBodyIn
    usd_per_gpu_hour: UsdPerGpuHour | None = None
    accelerator: str | None = name_field()
    tier: str | None = name_field()


class SloCostOut(Schema):
    meets: bool
    tok_per_s_per_gpu: float | None
    tok_s_kind: str = Field(description='the token basis, or "unstated" (source did not say)')
    tok_s_per_gpu_range: str = Field(description='both readings, "low-high", when unstated')
    usd_per_mtok_range: str = Field(description="$/Mtok at both readings, when unstated")
    provenance: str | None = Field(description="measured or interpolated")
    usd_per_mtok: float | None
    lower: str | None
    upper: str | None
    binding: str | None
    metrics: dict[str, float]
    reason: str
    skipped: list[str]
    slo: str
    price: PriceOut


# --- capacity ------------------------------------------------------------------------------


class CandidateIn(Input):
    model_config = STRICT_BODY

    label: str = Field(max_length=200)
    accelerator: str = Field(max_length=100)
    tok_per_s_per_gpu: TokPerS | None = Field(description="at the SLO; null: cannot meet it")
    token_kind: Literal["input", "output", "total"] = "output"
    gpus_per_replica: Gpus = 8
    gpus_per_node: Gpus = 8
    usd_per_gpu_hour: UsdPerGpuHour | None = None
    tier: str | None = name_field()
    throughput_provenance: str = Field("measured", max_length=100)
    scenario_input_tokens: Tokens | None = None
    scenario_output_tokens: Tokens | None = None
    scenario_cache_hit_rate: Share | None = None


class CapacityIn(Input):
    workload: Workload  # the dataclass itself: its fields and defaults are the schema
    candidates: list[CandidateIn] = Field(max_length=1000)


class PlanOut(Schema):
    label: str
    accelerator: str
    feasible: bool
    peak_requests_per_s: float
    requests_per_s_per_gpu: float | None
    replicas: int | None
    gpus: int | None
    nodes: int | None
    peak_utilization: float | None
    usd_per_month: float | None
    usd_per_mtok_served: float | None
    warnings: list[str]
    reason: str
    price: PriceOut


# --- claims --------------------------------------------------------------------------------


class ClaimQuery(Input):
    model_config = ConfigDict(allow_inf_nan=False)  # nan, inf: a 422 naming the field

    throughput_ratio: Ratio = Field(description="A's throughput / B's, e.g. 0.8")
    claimed_cost_ratio: Ratio = Field(description="e.g. 0.5 for 'half the cost'")
    comparison: Literal["<", "<=", "~"] = "<"
    usd_per_gpu_hour_a: UsdPerGpuHour | None = None
    usd_per_gpu_hour_b: DivisorUsdPerGpuHour | None = None
    accelerator_a: str | None = name_field()
    accelerator_b: str | None = name_field()
    tier_a: str | None = name_field()
    tier_b: str | None = name_field()
    prices_as_of: str = Field(
        "",
        max_length=100,
        description="the reference price set: a date (YYYY-MM-DD) or a set's name; newest",
    )


class VerdictOut(Schema):
    label: str
    kind: str
    throughput_ratio: float
    usd_per_gpu_hour_a: float
    usd_per_gpu_hour_b: float
    cost_ratio: float
    holds: bool


class ClaimOut(Schema):
    cost_ratio: float
    holds: bool
    summary: str
    throughput_ratio_needed: float
    usd_per_gpu_hour_a_needed: float
    price_a: PriceOut
    price_b: PriceOut
    assumptions: list[VerdictOut]


# --- stored runs ---------------------------------------------------------------------------


class RunSloQuery(PriceQuery, SloIn):
    token_kind: Literal["input", "output", "total"] = "output"


class CompareQuery(SloIn):
    run_a: RowId
    run_b: RowId
    token_kind: Literal["input", "output", "total"] = "output"
    usd_per_gpu_hour_a: UsdPerGpuHour | None = None
    tier_a: str | None = Field("owning_hyperscaler", min_length=1, max_length=100)
    usd_per_gpu_hour_b: UsdPerGpuHour | None = None
    tier_b: str | None = Field("owning_hyperscaler", min_length=1, max_length=100)
    prices_as_of: str = Field(
        "",
        max_length=100,
        description="the reference price set: a date (YYYY-MM-DD) or a set's name; newest",
    )


class SideOut(Schema):
    run_id: int
    deployment: str
    tok_per_s_per_gpu: float | None
    throughput_at_slo: str | None
    usd_per_mtok: float | None
    reason: str
    price: PriceOut


class DifferenceOut(Schema):
    field: str
    a: str | None
    b: str | None


class CompareOut(Schema):
    cost_ratio: float | None = Field(description="$/Mtok of A over $/Mtok of B")
    throughput_ratio: float | None
    slo: str
    a: SideOut
    b: SideOut
    differences: list[DifferenceOut]
    reason: str
