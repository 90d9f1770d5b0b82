"""The procurement calculator, pure: page inputs in, ranked rows out.

Prices every stored deployment (its latest complete sweep) at the point the answer's rule
chooses at the user's SLO (apps/costs/answer.py: the best measured point meeting it;
interpolation only when asked), sizes it for the workload, and ranks cheapest $/Mtok first.
The page's query string (which carries the whole state, so a result can be shared) is read
by forms.py (ProcurementQuery); the downloads are procurement_export.py.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from apps.costs.answer import Measured, Side, asks_success, best_side, by_deployment
from apps.costs.capacity import (
    Candidate,
    CapacityPlan,
    ScenarioShape,
    Workload,
    plan_capacity,
    workload_load,
)
from apps.costs.formulas import (
    HOURS_PER_MONTH,
    SECONDS_PER_HOUR,
    TOKENS_PER_MTOK,
    USER_PRICE_SOURCE,
    AcceleratorPrices,
    CostInputError,
    TierPrice,
    TokenKind,
    blended_usd_per_mtok,
    joules_per_token,
    tier_price,
    unstated_readings,
    usd_per_mtok,
)
from apps.costs.procurement_inputs import CAPEX_PRICE_SOURCE, ProcurementInputs
from apps.costs.slo import (
    Metric,
    Slo,
    SloBound,
    SloMiss,
    SloPoint,
    SloResult,
    explain_miss,
)


@dataclass(frozen=True, slots=True)
class DeploymentCurve:
    """One stored run as the cost model sees it: who served what, and its load points."""

    run_id: int
    label: str
    accelerator: str
    gpus: int
    engine: str
    quantization: str
    parallelism: str
    scenario: str
    input_tokens: int | None
    output_tokens: int | None
    cache_hit_rate: float | None
    provenance: str
    token_kind: str  # "input" / "output" / "total", or "unlabelled" for published figures
    points: list[SloPoint] = field(default_factory=list)
    # The caller's organization's own run, shown only to its members (badged "private").
    private: bool = False
    # A public self-reported run no reviewer approved yet, shown because the visitor asked
    # (?unreviewed=1; apps/runs/sweeps.py): labelled "awaiting review".
    awaiting_review: bool = False
    model: str = ""
    # A disaggregated deployment's pools (its `gpus` counts both): prefill, decode GPUs.
    prefill_gpus: int | None = None
    decode_gpus: int | None = None
    # The answer's points of this run (apps/costs/curve_selectors.procurement_curves): the
    # row's point is chosen from them by the one rule, as /answer/ and the box choose it.
    deployment_id: int = 0
    measured: tuple[Measured, ...] = ()
    partial: str = ""  # a newer run with fewer levels left beside this sweep
    # The Scenario row, whose SLO tiers (apps/catalog/slo_tiers.py) judge this curve.
    scenario_row: Any = None


def curve_readings(
    curve: DeploymentCurve, tput: float | None, basis: TokenKind | None
) -> tuple[float, float] | None:
    """A curve's tok/s/GPU under both readings (low, high) when its source did not state the
    token kind; None when it did, or when the scenario's shape is unknown. `tput` is the lower
    reading, the one a curve's points carry (selectors.deployment_curves): the higher is the
    same figure read the other way, a fixed ratio of it for one shape and basis."""
    n_in, n_out = curve.input_tokens, curve.output_tokens
    if curve.token_kind != "unlabelled" or tput is None or basis is None or not n_in or not n_out:
        return None
    low, high = sorted(unstated_readings(1.0, basis, input_tokens=n_in, output_tokens=n_out))
    return tput, tput * high / low


@dataclass(frozen=True, slots=True)
class Row:
    curve: DeploymentCurve
    price: TierPrice | None
    slo: SloResult | None
    usd_per_mtok: float | None
    plan: CapacityPlan | None
    problem: str = ""
    joules_per_token: float | None = None  # at the SLO throughput, all-in power
    token_basis: TokenKind | None = None
    # When the SLO cannot be met: why, and the plan at the nearest SLO it does meet.
    miss: SloMiss | None = None
    relaxed_plan: CapacityPlan | None = None
    # At the served (average) load: what a request and a million tokens cost.
    usd_per_request: float | None = None
    # At the buyer's own token prices: what the month's tokens sell for, less the GPUs.
    revenue_per_month: float | None = None
    margin_per_month: float | None = None
    served_input_usd_per_mtok: float | None = None
    served_output_usd_per_mtok: float | None = None
    served_blended_usd_per_mtok: float | None = None
    best_for_accelerator: bool = False
    # The point the one rule chose (its run, level, origin), and whether it states no
    # success rate (it then takes part, marked "success not stated").
    side: Side | None = None
    success_unstated: bool = False

    @property
    def ok(self) -> bool:
        return self.plan is not None and self.plan.feasible

    @property
    def measured_usd_per_mtok(self) -> float | None:
        """$/Mtok at the measured point below an interpolated answer: the figure the
        leaderboard, run page and /compare/ show for the same point, basis and tier."""
        if self.slo is None or self.slo.provenance != "interpolated" or self.price is None:
            return None
        if self.slo.lower is None:
            return None
        return usd_per_mtok(self.price.usd_per_gpu_hour, self.slo.lower.tok_per_s_per_gpu)

    # The names templates/includes/throughput.html reads, so /costs/ renders a row's tok/s
    # by the same rule as the board, run and compare pages.
    @property
    def tput_per_gpu(self) -> float | None:
        return self.slo.tok_per_s_per_gpu if self.slo else None

    @property
    def tput_kind(self) -> str:
        if self.curve.token_kind == "unlabelled":
            return "unstated"
        return self.token_basis.value if self.token_basis else self.curve.token_kind

    @property
    def tput_range(self) -> tuple[float, float] | None:
        """Both readings of a figure whose token kind the source did not state: read as
        output tokens and as total tokens of the scenario's shape (low, high tok/s/GPU)."""
        if self.slo is None:
            return None
        return curve_readings(self.curve, self.slo.tok_per_s_per_gpu, self.token_basis)

    @property
    def usd_range(self) -> tuple[float, float] | None:
        """$/Mtok at the two readings of `tput_range` (low, high)."""
        readings = self.tput_range
        if readings is None or self.price is None:
            return None
        costs = sorted(usd_per_mtok(self.price.usd_per_gpu_hour, r) for r in readings)
        return costs[0], costs[1]


def price_for(
    curve: DeploymentCurve, inputs: ProcurementInputs, book: Mapping[str, AcceleratorPrices]
) -> TierPrice:
    """The user's own price for this accelerator if typed, else one built from their capex
    + opex, else the chosen tier's."""
    sku = curve.accelerator.upper()
    own = inputs.own_prices.get(sku)
    if own is not None:
        source = (
            f"your profile “{inputs.profile}”" if sku in inputs.profile_skus else USER_PRICE_SOURCE
        )
        return TierPrice(curve.accelerator, "own", own, source)
    if inputs.capex is not None and inputs.capex_accelerator == sku:
        return TierPrice(
            curve.accelerator, "capex", inputs.capex.usd_per_gpu_hour, CAPEX_PRICE_SOURCE
        )
    return tier_price(book, curve.accelerator, inputs.tier)


def procurement_rows(
    curves: Sequence[DeploymentCurve],
    inputs: ProcurementInputs,
    book: Mapping[str, AcceleratorPrices],
) -> list[Row]:
    """Every deployment priced at its point by the answer's rule and sized for the workload,
    cheapest $/Mtok first (ties: more tok/s/GPU, the lighter load, the lower run id, as the
    answer breaks them), so each accelerator's first row is the answer's point for it."""
    rows = [_row(curve, inputs, book) for curve in curves]
    ranked = sorted(
        rows,
        key=lambda row: (
            not row.ok,
            row.usd_per_mtok if row.usd_per_mtok is not None else math.inf,
            -(row.tput_per_gpu or 0.0),
            (row.side.point.concurrency or 0) if row.side and row.side.point else 0,
            row.curve.run_id,
        ),
    )
    seen: set[str] = set()
    marked = []
    for row in ranked:  # cheapest first, so the first feasible row per accelerator is its best
        best = row.ok and row.curve.accelerator not in seen
        if best:
            seen.add(row.curve.accelerator)
        marked.append(replace(row, best_for_accelerator=best) if best else row)
    return marked


def _row(
    curve: DeploymentCurve, inputs: ProcurementInputs, book: Mapping[str, AcceleratorPrices]
) -> Row:
    try:
        price = price_for(curve, inputs, book)
    except CostInputError as error:
        return Row(curve, None, None, None, None, problem=f"no price: {error.message}")
    try:
        return _priced_row(curve, price, inputs, book)
    except CostInputError as error:
        # Inputs at the edge of float range: say so on this row rather than fail the page.
        return Row(curve, price, None, None, None, problem=f"{error.field} {error.message}")


def _plan(
    curve: DeploymentCurve, price: TierPrice, inputs: ProcurementInputs, result: SloResult
) -> CapacityPlan:
    shape = (
        ScenarioShape(curve.input_tokens, curve.output_tokens, curve.cache_hit_rate or 0.0)
        if curve.input_tokens and curve.output_tokens
        else None
    )
    candidate = Candidate(
        label=curve.label,
        accelerator=curve.accelerator,
        tok_per_s_per_gpu=result.tok_per_s_per_gpu,
        token_kind=inputs.token_kind,
        # One replica is the deployment as measured: its GPUs (both pools of a
        # disaggregated one) serve together.
        gpus_per_replica=curve.gpus,
        gpus_per_node=inputs.gpus_per_node,
        usd_per_gpu_hour=price.usd_per_gpu_hour,
        price_label=price.source,
        throughput_provenance=result.provenance or "measured",
        scenario=shape,
        note=result.reason,
    )
    return plan_capacity(inputs.workload, candidate)


def _served_costs(plan: CapacityPlan, workload: Workload) -> dict[str, float | None]:
    """$ per request and per million input / output / blended tokens at the average load
    (each kind carrying the whole bill, as $/Mtok does everywhere; blended 3:1)."""
    if not plan.feasible or plan.usd_per_month is None:
        return {}
    average = workload_load(workload).average_requests_per_s
    requests = average * SECONDS_PER_HOUR * HOURS_PER_MONTH
    input_cost = plan.usd_per_month / (requests * workload.input_tokens / TOKENS_PER_MTOK)
    output_cost = plan.usd_per_month / (requests * workload.output_tokens / TOKENS_PER_MTOK)
    return {
        "usd_per_request": plan.usd_per_month / requests,
        "served_input_usd_per_mtok": input_cost,
        "served_output_usd_per_mtok": output_cost,
        "served_blended_usd_per_mtok": blended_usd_per_mtok(input_cost, output_cost),
    }


def _revenue(plan: CapacityPlan, inputs: ProcurementInputs) -> dict[str, float | None]:
    """The month's tokens at the buyer's own token prices: uncached input at the input
    price, cached input at the cached price (the input price when none is given), output at
    the output price. Only when an input or output price is given."""
    sell_in = inputs.sell.get("sell_input_usd_per_mtok")
    sell_out = inputs.sell.get("sell_output_usd_per_mtok")
    if (sell_in is None and sell_out is None) or not plan.feasible or plan.usd_per_month is None:
        return {}
    cached_price = inputs.sell.get("sell_cached_input_usd_per_mtok")
    workload = inputs.workload
    requests = workload_load(workload).average_requests_per_s * SECONDS_PER_HOUR * HOURS_PER_MONTH
    cached = workload.input_tokens * workload.cache_hit_rate
    per_request = (
        (workload.input_tokens - cached) * (sell_in or 0.0)
        + cached * (cached_price if cached_price is not None else (sell_in or 0.0))
        + workload.output_tokens * (sell_out or 0.0)
    ) / TOKENS_PER_MTOK
    revenue = per_request * requests
    return {"revenue_per_month": revenue, "margin_per_month": revenue - plan.usd_per_month}


def _priced_row(
    curve: DeploymentCurve,
    price: TierPrice,
    inputs: ProcurementInputs,
    book: Mapping[str, AcceleratorPrices],
) -> Row:
    slo = inputs.slo_for(curve.scenario_row, curve.input_tokens)
    side, result = at_slo(curve, slo, inputs)
    cost = (
        usd_per_mtok(price.usd_per_gpu_hour, result.tok_per_s_per_gpu)
        if result.tok_per_s_per_gpu is not None
        else None
    )
    unlabelled = curve.token_kind == "unlabelled"
    plan = _plan(curve, price, inputs, result)
    miss: SloMiss | None = None
    relaxed_plan: CapacityPlan | None = None
    if not result.meets and slo.bounds:
        miss = explain_miss(curve.points, slo)
        if miss.relaxed is not None:
            _, relaxed = at_slo(curve, miss.relaxed, inputs)
            if relaxed.meets:
                relaxed_plan = _plan(curve, price, inputs, relaxed)
    if unlabelled:
        plan = _with_warning(
            plan,
            "the source does not say which tokens its tok/s counts: $/Mtok is shown read "
            "as output and as total tokens; GPUs are planned at the lower reading",
        )
    book_entry = {sku.upper(): entry for sku, entry in book.items()}.get(curve.accelerator.upper())
    kw = book_entry.all_in_kw if book_entry else None
    energy = (
        joules_per_token(kw, 1, result.tok_per_s_per_gpu)
        if kw and result.tok_per_s_per_gpu is not None
        else None
    )
    problem = "" if result.meets else (miss.describe() if miss else "") or result.reason
    return Row(
        curve,
        price,
        result,
        cost,
        plan,
        problem=problem,
        joules_per_token=energy,
        token_basis=inputs.token_kind,
        miss=miss,
        relaxed_plan=relaxed_plan,
        side=side,
        success_unstated=asks_success(slo)
        and side.point is not None
        and side.point.unstated_success,
        # Two dicts of named figures unpacked into the row's fields: mypy cannot match a
        # dict's values to each keyword's own type.
        **_served_costs(plan, inputs.workload),  # type: ignore[arg-type]
        **_revenue(plan, inputs),  # type: ignore[arg-type]
    )


def at_slo(curve: DeploymentCurve, slo: Slo, inputs: ProcurementInputs) -> tuple[Side, SloResult]:
    """The curve's point by the answer's rule (apps/costs/answer.py best_side: its best
    measured point meeting `slo`; interpolation only when asked, labelled, within max_gap),
    and that point as the capacity plan and the table read it."""
    side = best_side(
        curve.measured,
        f"#{curve.deployment_id}",
        slo,
        interpolate=inputs.interpolate,
        max_gap=inputs.max_gap,
        side_of=by_deployment,
    )
    if side.point is None or side.tok_s_per_gpu is None:
        return side, SloResult(meets=False, reason=side.reason)
    return side, SloResult(
        meets=True,
        reason=side.reason,
        tok_per_s_per_gpu=side.tok_s_per_gpu,
        provenance=side.reading,
        lower=side.point.slo_point(),
        upper=side.upper.slo_point() if side.upper else None,
        metrics=dict(side.point.metrics),
    )


def _with_warning(plan: CapacityPlan, warning: str) -> CapacityPlan:
    return replace(plan, warnings=(*plan.warnings, warning))


def _log_spaced(low: float, high: float, count: int) -> list[float]:
    """`count` bounds from `low` to `high`, log-spaced (`low` alone when count is 1)."""
    return sorted(
        {low * (high / low) ** (i / (count - 1)) if count > 1 else low for i in range(count)}
    )


def cost_of_latency(
    rows: Sequence[Row], inputs: ProcurementInputs, *, steps: int = 10
) -> dict[str, list[tuple[float, float]]]:
    """$/month against the TTFT bound, per accelerator: for each bound (log-spaced between
    the lowest and highest TTFT any point reports, at the SLO's percentile), the cheapest
    plan among the accelerator's deployments by the answer's rule, the SLO's other bounds
    kept."""
    base = {
        row.curve.run_id: inputs.slo_for(row.curve.scenario_row, row.curve.input_tokens)
        for row in rows
    }
    ttft = next((b for b in inputs.slo.bounds if b.metric is Metric.TTFT_S), None)
    percentile = ttft.percentile if ttft else "p99"
    key = SloBound(Metric.TTFT_S, percentile, 1.0).key
    values = sorted(
        {
            p.metrics[key]
            for row in rows
            for p in row.curve.points
            if row.price is not None and p.metrics.get(key, 0) > 0
        }
    )
    if not values:
        return {}
    limits = _log_spaced(values[0], values[-1], max(min(steps, len(values)), 1))
    best: dict[str, dict[float, float]] = {}
    for row in rows:
        own = base[row.curve.run_id]
        others = tuple(b for b in own.bounds if b.metric is not Metric.TTFT_S)
        ttfts = [p.metrics[key] for p in row.curve.points if key in p.metrics]
        if row.price is None or not ttfts:
            continue
        # No bound below the lightest point's TTFT can be met, and every bound past the
        # heaviest one gives the same answer: that one is worked out once.
        past_all: float | None = None
        for limit in limits:
            if limit < min(ttfts):
                continue
            if limit >= max(ttfts) and past_all is not None:
                usd = past_all
            else:
                slo = Slo(
                    (*others, SloBound(Metric.TTFT_S, percentile, limit)),
                    own.min_success_rate,
                )
                try:
                    _, result = at_slo(row.curve, slo, inputs)
                    plan = _plan(row.curve, row.price, inputs, result) if result.meets else None
                except CostInputError:
                    continue  # the row itself says why
                if plan is None or plan.usd_per_month is None:
                    continue
                usd = plan.usd_per_month
                if limit >= max(ttfts):
                    past_all = usd
            found = best.setdefault(row.curve.accelerator, {})
            found[limit] = min(found.get(limit, math.inf), usd)
    return {sku: sorted(by_limit.items()) for sku, by_limit in sorted(best.items())}
