"""The cost model through the API, mounted at /api/v1/costs/.

Every answer says which price it used. Inputs the model cannot use get 422 with
{"detail": [{"path": <field>, "message": ...}]}, the same shape as the rest of the API.
"""

from __future__ import annotations

from typing import Literal

from django.http import HttpRequest
from ninja import Field, Query, Router, Schema, Status
from pydantic import ConfigDict

from apps.accounts.auth import optional_org
from apps.costs import selectors
from apps.costs.capacity import Candidate, ScenarioShape, Workload, rank_plans
from apps.costs.claims import (
    Claim,
    Comparison,
    check_claim,
    compare_runs,
    tier_pair_assumptions,
)
from apps.costs.formulas import (
    CapexOpex,
    CostInputError,
    Throughput,
    TierPrice,
    TokenKind,
    TokenMix,
    capex_opex_usd_per_gpu_hour,
    choose_price,
    deployment_usd_per_mtok,
    joules_per_token,
    mtok_costs,
    require_gpus,
    require_positive,
    tok_per_s_per_mw,
)
from apps.costs.prices import with_profile_prices
from apps.costs.procurement import export_records, parse_inputs, procurement_rows, state
from apps.costs.slo import Slo, SloCost, SloPoint, cost_at_slo

router = Router(tags=["costs"])


class ErrorItem(Schema):
    path: str
    message: str


class ErrorOut(Schema):
    detail: list[ErrorItem]


class PriceOut(Schema):
    usd_per_gpu_hour: float
    accelerator: str
    tier: str
    source: str = Field(description="where the price came from")
    citation: str = Field("", description="the reference it cites, if any")


def _error(error: CostInputError) -> Status:
    return Status(422, {"detail": [{"path": error.field, "message": error.message}]})


def _price(
    request: HttpRequest, usd_per_gpu_hour: float | None, accelerator: str | None, tier: str | None
) -> TierPrice:
    book = selectors.price_book(org=optional_org(request))
    return choose_price(book, usd_per_gpu_hour=usd_per_gpu_hour, accelerator=accelerator, tier=tier)


def _price_out(price: TierPrice) -> dict:
    return {
        "usd_per_gpu_hour": price.usd_per_gpu_hour,
        "accelerator": price.accelerator,
        "tier": price.tier,
        "source": price.source,
        "citation": price.citation,
    }


def _slo_cost_out(cost: SloCost, slo: Slo, price: TierPrice) -> dict:
    result = cost.result
    return {
        "meets": result.meets,
        "tok_per_s_per_gpu": result.tok_per_s_per_gpu,
        "provenance": result.provenance,
        "usd_per_mtok": cost.usd_per_mtok,
        "lower": result.lower.label if result.lower else None,
        "upper": result.upper.label if result.upper else None,
        "binding": result.binding.describe() if result.binding else None,
        "metrics": result.metrics,
        "reason": result.reason,
        "skipped": list(result.skipped),
        "slo": slo.describe(),
        "price": _price_out(price),
    }


def _kw_per_gpu(request: HttpRequest, accelerator: str | None, kw: float | None) -> float | None:
    if kw is not None:
        return kw
    if not accelerator:
        return None
    book = selectors.price_book(org=optional_org(request)).get(accelerator.strip().upper())
    return book.all_in_kw if book else None


# --- $/Mtok --------------------------------------------------------------------------------


class PriceQuery(Schema):
    model_config = ConfigDict(allow_inf_nan=False)  # nan, inf: a 422 naming the field

    usd_per_gpu_hour: float | None = Field(None, description="your own $/GPU-hr")
    accelerator: str | None = Field(None, description="SKU, to price from a tier instead")
    tier: str | None = Field(
        None, description="owning_hyperscaler, owning_neocloud, rental_3yr or your own tier"
    )


class MtokQuery(PriceQuery):
    tok_per_s: float = Field(description="throughput of the whole deployment, all its GPUs")
    gpus: int = Field(1, description="GPUs the throughput was measured on")
    token_kind: Literal["input", "output", "total", "unlabelled"] = Field(
        "total", description="which tokens tok_per_s counts (echoed, for the record)"
    )
    kw_per_gpu: float | None = Field(
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


@router.get(
    "/mtok",
    response={200: MtokOut, 422: ErrorOut},
    summary="$/Mtok from a price and a deployment's throughput",
)
def mtok(request: HttpRequest, query: Query[MtokQuery]):
    """$ per million tokens = $/GPU-hr x GPUs / (tok/s x 3600 / 1e6).

    `GET /api/v1/costs/mtok?usd_per_gpu_hour=1.48&gpus=8&tok_per_s=2626` gives 1.2524.
    """
    try:
        price = _price(request, query.usd_per_gpu_hour, query.accelerator, query.tier)
        gpus = require_gpus(query.gpus)
        tput = require_positive("tok_per_s", query.tok_per_s)
        cost = deployment_usd_per_mtok(price.usd_per_gpu_hour, gpus, tput)
        kw = _kw_per_gpu(request, query.accelerator, query.kw_per_gpu)
        energy = joules_per_token(kw, gpus, tput) if kw is not None else None
        per_mw = tok_per_s_per_mw(kw, gpus, tput) if kw is not None else None
    except CostInputError as error:
        return _error(error)
    return {
        "usd_per_mtok": cost,
        "token_kind": query.token_kind,
        "tok_per_s": tput,
        "gpus": gpus,
        "tok_per_s_per_gpu": tput / gpus,
        "usd_per_hour": price.usd_per_gpu_hour * gpus,
        "price": _price_out(price),
        "kw_per_gpu": kw,
        "joules_per_token": energy,
        "tok_per_s_per_mw": per_mw,
    }


class KindsQuery(PriceQuery):
    input_tok_per_s: float = Field(description="whole deployment")
    output_tok_per_s: float = Field(description="whole deployment")
    gpus: int = 1
    mix_input: float = Field(3.0, description="input weight of the blend")
    mix_output: float = Field(1.0, description="output weight of the blend")
    cached_input_usd_per_mtok: float | None = Field(
        None, description="price cached input tokens apart at this $/Mtok"
    )
    cached_input_share: float = Field(0.0, description="share of input tokens from the cache")


class KindsOut(Schema):
    input: float
    output: float
    total: float
    blended: float
    mix: str
    cached_input: float | None
    uncached_input: float | None
    price: PriceOut


@router.get(
    "/mtok/kinds",
    response={200: KindsOut, 422: ErrorOut},
    summary="$/Mtok for input, output, total and blended tokens",
)
def mtok_kinds(request: HttpRequest, query: Query[KindsQuery]):
    """Each kind carries the whole GPU cost; the blend is their mix-weighted mean (3:1)."""
    try:
        price = _price(request, query.usd_per_gpu_hour, query.accelerator, query.tier)
        costs = mtok_costs(
            price.usd_per_gpu_hour,
            Throughput(
                gpus=query.gpus,
                input_tok_per_s=query.input_tok_per_s,
                output_tok_per_s=query.output_tok_per_s,
                cached_input_share=query.cached_input_share,
            ),
            mix=TokenMix(query.mix_input, query.mix_output),
            cached_input_usd_per_mtok=query.cached_input_usd_per_mtok,
        )
    except CostInputError as error:
        return _error(error)
    return {
        "input": costs.input,
        "output": costs.output,
        "total": costs.total,
        "blended": costs.blended,
        "mix": f"{costs.mix.input_weight:g}:{costs.mix.output_weight:g}",
        "cached_input": costs.cached_input,
        "uncached_input": costs.uncached_input,
        "price": _price_out(price),
    }


# --- $/GPU-hr ------------------------------------------------------------------------------


class GpuHourQuery(Schema):
    model_config = ConfigDict(allow_inf_nan=False)  # nan, inf: a 422 naming the field

    gpu_purchase_usd: float
    server_share_usd: float = Field(0.0, description="this GPU's share of the server")
    depreciation_years: float = 4.0
    kw_per_gpu: float = Field(description="all-in kW per GPU")
    usd_per_kwh: float
    pue: float = Field(1.0, description="1.0 when kw_per_gpu already includes the facility")
    hosting_usd_per_month: float = 0.0
    utilization: float = 1.0


class GpuHourOut(Schema):
    usd_per_gpu_hour: float
    depreciation: float
    power: float
    hosting: float
    utilization: float


@router.get(
    "/gpu-hour",
    response={200: GpuHourOut, 422: ErrorOut},
    summary="$/GPU-hr from capex and opex",
)
def gpu_hour(request: HttpRequest, query: Query[GpuHourQuery]):
    """(capex / (years x 8760) + kW x PUE x $/kWh + hosting / 730) / utilization."""
    try:
        cost = capex_opex_usd_per_gpu_hour(CapexOpex(**query.dict()))
    except CostInputError as error:
        return _error(error)
    return {
        "usd_per_gpu_hour": cost.usd_per_gpu_hour,
        "depreciation": cost.depreciation,
        "power": cost.power,
        "hosting": cost.hosting,
        "utilization": cost.utilization,
    }


# --- cost at an SLO ------------------------------------------------------------------------


class SloIn(Schema):
    ttft_s_max: float | None = None
    ttft_percentile: str = "p99"
    interactivity_min: float | None = Field(None, description="tok/s/user")
    interactivity_percentile: str = "p50"
    tpot_s_max: float | None = None
    tpot_percentile: str = "p50"
    e2el_s_max: float | None = None
    e2el_percentile: str = "p99"
    min_success_rate: float = Field(0.99, description="a point with fewer successes misses")

    def to_slo(self) -> Slo:
        return Slo.of(**self.dict())


class PointIn(Schema):
    label: str = ""
    tok_per_s_per_gpu: float
    metrics: dict[str, float] = Field(
        description='keys like "ttft_s.p99", "interactivity.p50", "tpot_s.p50", "e2el_s.p999"'
    )
    success_rate: float | None = Field(
        None, description="succeeded / total; without it the SLO cannot be checked"
    )


class SloCostIn(Schema):
    points: list[PointIn]
    slo: SloIn
    usd_per_gpu_hour: float | None = None
    accelerator: str | None = None
    tier: str | None = None


class SloCostOut(Schema):
    meets: bool
    tok_per_s_per_gpu: float | None
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


@router.post(
    "/slo",
    response={200: SloCostOut, 422: ErrorOut},
    summary="Best throughput and $/Mtok at an SLO",
)
def slo_cost(request: HttpRequest, payload: SloCostIn):
    """Highest throughput per GPU meeting the SLO, interpolated along the Pareto front."""
    try:
        price = _price(request, payload.usd_per_gpu_hour, payload.accelerator, payload.tier)
        slo = payload.slo.to_slo()
        points = [
            SloPoint(p.label or f"#{i}", p.tok_per_s_per_gpu, dict(p.metrics), p.success_rate)
            for i, p in enumerate(payload.points)
        ]
        cost = cost_at_slo(points, slo, price.usd_per_gpu_hour)
    except CostInputError as error:
        return _error(error)
    return _slo_cost_out(cost, slo, price)


# --- capacity ------------------------------------------------------------------------------


class WorkloadIn(Schema):
    input_tokens: float
    output_tokens: float
    requests_per_day: float | None = None
    peak_requests_per_s: float | None = None
    peak_to_average: float = 1.0
    cache_hit_rate: float = 0.0
    headroom: float = 0.2


class CandidateIn(Schema):
    label: str
    accelerator: str
    tok_per_s_per_gpu: float | None = Field(description="at the SLO; null: cannot meet it")
    token_kind: Literal["input", "output", "total"] = "output"
    gpus_per_replica: int = 8
    gpus_per_node: int = 8
    usd_per_gpu_hour: float | None = None
    tier: str | None = None
    throughput_provenance: str = "measured"
    scenario_input_tokens: float | None = None
    scenario_output_tokens: float | None = None
    scenario_cache_hit_rate: float | None = None


class CapacityIn(Schema):
    workload: WorkloadIn
    candidates: list[CandidateIn]


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


@router.post(
    "/capacity",
    response={200: list[PlanOut], 422: ErrorOut},
    summary="GPUs, nodes and $/month per deployment, cheapest first",
)
def capacity(request: HttpRequest, payload: CapacityIn):
    try:
        workload = Workload(**payload.workload.dict())
        candidates = []
        prices: dict[str, TierPrice] = {}
        for index, c in enumerate(payload.candidates):
            try:
                price = _price(request, c.usd_per_gpu_hour, c.accelerator, c.tier)
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
                    label=c.label,
                    accelerator=c.accelerator,
                    tok_per_s_per_gpu=c.tok_per_s_per_gpu,
                    token_kind=TokenKind(c.token_kind),
                    gpus_per_replica=c.gpus_per_replica,
                    gpus_per_node=c.gpus_per_node,
                    usd_per_gpu_hour=price.usd_per_gpu_hour,
                    price_label=price.source,
                    throughput_provenance=c.throughput_provenance,
                    scenario=shape,
                )
            )
        plans = rank_plans(workload, candidates)
    except CostInputError as error:
        return _error(error)
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
            "price": _price_out(prices[plan.candidate.label]),
        }
        for plan in plans
    ]


# --- claims --------------------------------------------------------------------------------


class ClaimQuery(Schema):
    model_config = ConfigDict(allow_inf_nan=False)  # nan, inf: a 422 naming the field

    throughput_ratio: float = Field(description="A's throughput / B's, e.g. 0.8")
    claimed_cost_ratio: float = Field(description="e.g. 0.5 for 'half the cost'")
    comparison: Literal["<", "<=", "~"] = "<"
    usd_per_gpu_hour_a: float | None = None
    usd_per_gpu_hour_b: float | None = None
    accelerator_a: str | None = None
    accelerator_b: str | None = None
    tier_a: str | None = None
    tier_b: str | None = None


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


@router.get(
    "/claim", response={200: ClaimOut, 422: ErrorOut}, summary="Check a published cost claim"
)
def claim(request: HttpRequest, query: Query[ClaimQuery]):
    """Cost ratio = (price A / price B) / throughput ratio, and every reference tier pairing.

    `?throughput_ratio=0.8&usd_per_gpu_hour_a=1.48&usd_per_gpu_hour_b=1.95&claimed_cost_ratio=0.5`
    gives 0.95: the claim does not hold.
    """
    try:
        price_a = _suffixed(
            _price, request, query.usd_per_gpu_hour_a, query.accelerator_a, query.tier_a, "_a"
        )
        price_b = _suffixed(
            _price, request, query.usd_per_gpu_hour_b, query.accelerator_b, query.tier_b, "_b"
        )
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
            book = selectors.price_book(org=optional_org(request))
            require_positive("throughput_ratio", query.throughput_ratio)
            assumptions = tier_pair_assumptions(
                book, query.accelerator_a, query.accelerator_b, query.throughput_ratio
            )
        check = check_claim(stated, assumptions)
    except CostInputError as error:
        return _error(error)
    return {
        "cost_ratio": check.cost_ratio,
        "holds": check.holds,
        "summary": check.summary(),
        "throughput_ratio_needed": check.throughput_ratio_needed,
        "usd_per_gpu_hour_a_needed": check.usd_per_gpu_hour_a_needed,
        "price_a": _price_out(price_a),
        "price_b": _price_out(price_b),
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


def _suffixed(resolve, request, price, accelerator, tier, suffix: str) -> TierPrice:
    """Resolve one side's price, naming that side's fields (tier_a, usd_per_gpu_hour_b ...)."""
    try:
        return resolve(request, price, accelerator, tier)
    except CostInputError as error:
        raise CostInputError(error.field + suffix, error.message) from None


# --- stored runs ---------------------------------------------------------------------------


class SloQuery(Schema):
    """An SLO in a query string: bounds in s (tok/s/user for interactivity), percentiles
    spelled p50, p90, p95, p99 or p99.9, and a minimum success rate."""

    model_config = ConfigDict(allow_inf_nan=False)  # nan, inf: a 422 naming the field

    ttft_s_max: float | None = None
    ttft_percentile: str = "p99"
    interactivity_min: float | None = None
    interactivity_percentile: str = "p50"
    tpot_s_max: float | None = None
    tpot_percentile: str = "p50"
    e2el_s_max: float | None = None
    e2el_percentile: str = "p99"
    min_success_rate: float = 0.99

    def slo(self) -> Slo:
        return Slo.of(**{name: getattr(self, name) for name in SloQuery.model_fields})


class RunSloQuery(PriceQuery, SloQuery):
    token_kind: Literal["input", "output", "total"] = "output"


@router.get(
    "/runs/{run_id}/slo",
    response={200: SloCostOut, 404: ErrorOut, 422: ErrorOut},
    summary="Best throughput and $/Mtok at an SLO for a stored run",
)
def run_slo_cost(request: HttpRequest, run_id: int, query: Query[RunSloQuery]):
    """The run's points priced at the given price, or at its accelerator's tier."""
    org = optional_org(request)
    curves = selectors.deployment_curves(org=org, kind=TokenKind(query.token_kind), run_id=run_id)
    if not curves:
        return Status(
            404, {"detail": [{"path": "run_id", "message": "no visible run with throughput"}]}
        )
    (curve,) = curves
    try:
        price = _price(
            request, query.usd_per_gpu_hour, query.accelerator or curve.accelerator, query.tier
        )
        slo = query.slo()
        cost = cost_at_slo(curve.points, slo, price.usd_per_gpu_hour)
    except CostInputError as error:
        return _error(error)
    return _slo_cost_out(cost, slo, price)


@router.get(
    "/procurement",
    response={200: dict, 422: ErrorOut},
    summary="The procurement calculator's ranked table",
)
def procurement_table(request: HttpRequest):
    """Takes the same query parameters as the /costs/ page (tier, price_<SKU>, ttft_s_max,
    interactivity_min, e2el_s_max, requests_per_day, input_tokens, output_tokens,
    cache_hit_rate, peak_to_average, headroom, gpus_per_node, token_kind, and for an own
    price built from capex + opex: capex_accelerator, gpu_purchase_usd, server_share_usd,
    depreciation_years, kw_per_gpu, usd_per_kwh, pue, hosting_usd_per_month, utilization;
    model, scenario, min_success_pct, workload_unit with tokens_per_day /
    input_tokens_per_day + output_tokens_per_day / peak_requests_per_s, length_mix, and the
    sell_*_usd_per_mtok token prices) and returns its rows, cheapest per month first, each
    with the price it used. The token's organization's active price profile applies."""
    org = optional_org(request)
    book = selectors.price_book(org=org)
    # The token's organization's active price profile applies, as on every page.
    profiled = with_profile_prices(request.GET, org)
    params = profiled.params
    inputs, errors = parse_inputs(params, book, profile=profiled)
    if inputs is None:
        detail = [{"path": error.field, "message": error.message} for error in errors]
        return Status(422, {"detail": detail})
    curves = selectors.deployment_curves(
        org=org, kind=inputs.token_kind, model=inputs.model, scenario=inputs.scenario
    )
    rows = procurement_rows(curves, inputs, book)
    return {
        "state": state(params),
        "price_profile": profiled.profile,
        "rows": export_records(rows, inputs),
    }


class CompareQuery(SloQuery):
    run_a: int
    run_b: int
    token_kind: Literal["input", "output", "total"] = "output"
    usd_per_gpu_hour_a: float | None = None
    tier_a: str | None = "owning_hyperscaler"
    usd_per_gpu_hour_b: float | None = None
    tier_b: str | None = "owning_hyperscaler"


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


@router.get(
    "/compare",
    response={200: CompareOut, 404: ErrorOut, 422: ErrorOut},
    summary="A vs B: cost ratio at an SLO with everything that differs",
)
def compare(request: HttpRequest, query: Query[CompareQuery]):
    org = optional_org(request)
    kind = TokenKind(query.token_kind)
    curves = {}
    for side, run_id in (("a", query.run_a), ("b", query.run_b)):
        found = selectors.deployment_curves(org=org, kind=kind, run_id=run_id)
        if not found:
            message = "no visible run with throughput"
            return Status(404, {"detail": [{"path": f"run_{side}", "message": message}]})
        curves[side] = found[0]
    try:
        price_a = _suffixed(
            _price, request, query.usd_per_gpu_hour_a, curves["a"].accelerator, query.tier_a, "_a"
        )
        price_b = _suffixed(
            _price, request, query.usd_per_gpu_hour_b, curves["b"].accelerator, query.tier_b, "_b"
        )
        slo = query.slo()
    except CostInputError as error:
        return _error(error)
    result = compare_runs(curves["a"], price_a, curves["b"], price_b, slo)

    def side_out(side) -> dict:
        return {
            "run_id": side.curve.run_id,
            "deployment": side.curve.label,
            "tok_per_s_per_gpu": side.result.tok_per_s_per_gpu,
            "throughput_at_slo": side.result.provenance,
            "usd_per_mtok": side.usd_per_mtok,
            "reason": side.result.reason,
            "price": _price_out(side.price),
        }

    return {
        "cost_ratio": result.cost_ratio,
        "throughput_ratio": result.throughput_ratio,
        "slo": slo.describe(),
        "a": side_out(result.a),
        "b": side_out(result.b),
        "differences": [
            {
                "field": d.field,
                "a": None if d.a is None else str(d.a),
                "b": None if d.b is None else str(d.b),
            }
            for d in result.differences
        ],
        "reason": result.reason,
    }
