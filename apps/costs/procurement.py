"""The procurement calculator, pure: page inputs in, ranked rows out.

Parses the page's query string (which carries the whole state, so a result can be
shared), prices every stored deployment at the user's SLO, sizes it for the workload,
and ranks cheapest first. Bad inputs come back as field errors, never as exceptions.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from apps.costs.capacity import (
    SECONDS_PER_DAY,
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
    CapexOpex,
    CostInputError,
    GpuHourCost,
    Tier,
    TierPrice,
    TokenKind,
    blended_usd_per_mtok,
    capex_opex_usd_per_gpu_hour,
    joules_per_token,
    require_non_negative,
    tier_price,
    unstated_readings,
    usd_per_mtok,
)
from apps.costs.slo import (
    Metric,
    Slo,
    SloBound,
    SloMiss,
    SloPoint,
    SloResult,
    best_throughput_at_slo,
    explain_miss,
)

if TYPE_CHECKING:  # the page's reader of prices; this module stays free of the database
    from apps.costs.prices import ProfiledQuery


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
    model: str = ""
    # A disaggregated deployment's pools (its `gpus` counts both): prefill, decode GPUs.
    prefill_gpus: int | None = None
    decode_gpus: int | None = None


DEFAULTS: dict[str, str] = {
    "tier": Tier.OWNING_HYPERSCALER.value,
    "token_kind": TokenKind.OUTPUT.value,
    "ttft_s_max": "",
    "ttft_percentile": "p99",
    "interactivity_min": "",
    "e2el_s_max": "",
    # In percent; 0 asks nothing of it (InferenceX's rows do not report a success rate).
    "min_success_pct": "99",
    # Which deployments: a model name and a scenario slug (blank: all).
    "model": "",
    "scenario": "",
    # The workload in the buyer's units: one of WORKLOAD_UNITS, and its figure.
    "workload_unit": "requests_per_day",
    "tokens_per_day": "",
    "input_tokens_per_day": "",
    "output_tokens_per_day": "",
    "peak_requests_per_s": "",
    "requests_per_day": "1000000",
    # A weighted mix of lengths instead of one: "20000/1000:0.7, 1k-1k:0.3" (input/output
    # tokens or a scenario's slug, then its share of requests).
    "length_mix": "",
    # The seed workload: 20k in / 1k out / 60% prefix cache.
    "input_tokens": "20000",
    "output_tokens": "1000",
    "cache_hit_rate": "0.6",
    "peak_to_average": "2",
    "headroom": "0.2",
    "gpus_per_node": "8",
    # An own price built from capex + opex, applied to one accelerator.
    "capex_accelerator": "",
    "gpu_purchase_usd": "",
    "server_share_usd": "0",
    "depreciation_years": "4",
    "kw_per_gpu": "",
    "usd_per_kwh": "0.08",
    "pue": "1.0",
    "hosting_usd_per_month": "0",
    "utilization": "1",
    # What the buyer sells tokens at ($/Mtok), where they do: revenue and margin per row.
    "sell_input_usd_per_mtok": "",
    "sell_cached_input_usd_per_mtok": "",
    "sell_output_usd_per_mtok": "",
}
SELL_FIELDS = (
    "sell_input_usd_per_mtok",
    "sell_cached_input_usd_per_mtok",
    "sell_output_usd_per_mtok",
)
PRICE_PREFIX = "price_"
CAPEX_PRICE_SOURCE = "your capex + opex"
_TEXT_FIELDS = {
    "tier",
    "token_kind",
    "ttft_percentile",
    "capex_accelerator",
    "model",
    "scenario",
    "workload_unit",
    "length_mix",
}
WORKLOAD_UNITS = {
    "requests_per_day": "requests per day",
    "tokens_per_day": "tokens per day (input + output)",
    "io_tokens_per_day": "input and output tokens per day",
    "peak_requests_per_s": "requests per second at peak",
}
# The figure field(s) each unit reads.
_UNIT_FIELDS = {
    "requests_per_day": ("requests_per_day",),
    "tokens_per_day": ("tokens_per_day",),
    "io_tokens_per_day": ("input_tokens_per_day", "output_tokens_per_day"),
    "peak_requests_per_s": ("peak_requests_per_s",),
}


@dataclass(frozen=True, slots=True)
class FieldError:
    field: str
    message: str


@dataclass(frozen=True, slots=True)
class ProcurementInputs:
    tier: str
    own_prices: dict[str, float]
    token_kind: TokenKind
    slo: Slo
    workload: Workload
    gpus_per_node: int
    capex_accelerator: str = ""
    capex: GpuHourCost | None = None
    model: str = ""
    scenario: str = ""
    # Each step from the buyer's units to what the plan sizes for, in words.
    conversions: tuple[str, ...] = ()
    # $/Mtok the buyer sells input, cached input and output tokens at (None: not given).
    sell: dict[str, float | None] = field(default_factory=dict)
    # The organization's active price profile, and the SKUs whose price it gave.
    profile: str = ""
    profile_skus: frozenset[str] = frozenset()


def state(params: Mapping[str, str]) -> dict[str, str]:
    """The page state: defaults overlaid with what the query string gives, prices included."""
    values = {name: params.get(name, default) for name, default in DEFAULTS.items()}
    for name, value in params.items():
        if name.startswith(PRICE_PREFIX) and value.strip():
            values[name] = value
    return values


def _number(values: Mapping[str, str], name: str, errors: list[FieldError]) -> float | None:
    text = values.get(name, "").strip().replace(",", "")
    if not text:
        return None
    try:
        number = float(text)
    except ValueError:
        errors.append(FieldError(name, f"must be a number (got {text!r})"))
        return None
    if not math.isfinite(number):
        errors.append(FieldError(name, "must be a finite number"))
        return None
    return number


def parse_inputs(
    params: Mapping[str, str],
    book: Mapping[str, AcceleratorPrices] | None = None,
    *,
    profile: ProfiledQuery | None = None,
    shapes: Mapping[str, tuple[float, float]] | None = None,
) -> tuple[ProcurementInputs | None, list[FieldError]]:
    """The calculator's inputs from a query string, or the errors naming each bad field.

    `book` gives the all-in kW of an accelerator when a capex + opex price leaves it out.
    """
    values = state(params)
    errors: list[FieldError] = []
    numbers = {name: _number(values, name, errors) for name in DEFAULTS if name not in _TEXT_FIELDS}
    try:
        kind = TokenKind(values["token_kind"])
    except ValueError:
        errors.append(FieldError("token_kind", "must be input, output or total"))
        kind = TokenKind.OUTPUT
    tier = values["tier"].strip()
    if not tier:
        errors.append(FieldError("tier", "is required"))

    own_prices: dict[str, float] = {}
    for name in values:
        if not name.startswith(PRICE_PREFIX):
            continue
        price = _number(values, name, errors)
        if price is None:
            continue
        try:
            own_prices[name.removeprefix(PRICE_PREFIX).upper()] = require_non_negative(name, price)
        except CostInputError as error:
            errors.append(FieldError(name, error.message))

    slo = Slo(())
    success_pct = _or(numbers["min_success_pct"], 99.0)
    if not 0 <= success_pct <= 100:
        errors.append(
            FieldError("min_success_pct", f"must be between 0 and 100 (got {success_pct:g})")
        )
    try:
        slo = Slo.of(
            ttft_s_max=numbers["ttft_s_max"],
            ttft_percentile=values["ttft_percentile"] or "p99",
            interactivity_min=numbers["interactivity_min"],
            e2el_s_max=numbers["e2el_s_max"],
            min_success_rate=min(max(success_pct, 0.0), 100.0) / 100.0,
        )
    except CostInputError as error:
        errors.append(FieldError(error.field, error.message))

    unit = values["workload_unit"].strip() or "requests_per_day"
    if unit not in WORKLOAD_UNITS:
        errors.append(
            FieldError(
                "workload_unit", f"must be one of {', '.join(WORKLOAD_UNITS)} (got {unit!r})"
            )
        )
        unit = "requests_per_day"
    workload: Workload | None = None
    conversions: tuple[str, ...] = ()
    if values["length_mix"].strip():
        try:
            mixed_in, mixed_out, step = length_mix(values["length_mix"], shapes or {})
        except CostInputError as error:
            errors.append(FieldError(error.field, error.message))
        else:
            numbers["input_tokens"], numbers["output_tokens"] = mixed_in, mixed_out
            conversions = (step,)
    for required in (*_UNIT_FIELDS[unit], "input_tokens", "output_tokens"):
        if numbers[required] is None and not any(e.field == required for e in errors):
            errors.append(FieldError(required, "is required"))
    if not errors:
        try:
            workload, steps = _workload(unit, numbers)
            conversions += steps
            load = workload_load(workload)
        except CostInputError as error:
            errors.append(FieldError(error.field, error.message))
        else:
            conversions += _load_steps(workload, load.peak_requests_per_s, kind)

    gpus_per_node = numbers["gpus_per_node"]
    bad_node = gpus_per_node is None or gpus_per_node < 1 or gpus_per_node != int(gpus_per_node)
    if bad_node and not any(e.field == "gpus_per_node" for e in errors):
        errors.append(FieldError("gpus_per_node", "must be a whole number of at least 1"))
    sell: dict[str, float | None] = {}
    for name in SELL_FIELDS:
        value = numbers[name]
        if value is not None and value < 0:
            errors.append(FieldError(name, f"must not be negative (got {value:g})"))
        sell[name] = value
    capex_accelerator = values["capex_accelerator"].strip().upper()
    capex = _capex_price(capex_accelerator, numbers, book or {}, errors)
    if errors or workload is None or gpus_per_node is None:
        return None, errors
    return (
        ProcurementInputs(
            tier=tier,
            own_prices=own_prices,
            token_kind=kind,
            slo=slo,
            workload=workload,
            gpus_per_node=int(gpus_per_node),
            capex_accelerator=capex_accelerator if capex else "",
            capex=capex,
            model=values["model"].strip(),
            scenario=values["scenario"].strip(),
            conversions=conversions,
            sell=sell,
            profile=profile.profile if profile else "",
            profile_skus=profile.profile_skus if profile else frozenset(),
        ),
        [],
    )


def _n(value: float) -> str:
    """A figure as a buyer reads it: thousands separated, at most 4 significant digits
    past the point."""
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.4g}"


def _workload(unit: str, numbers: Mapping[str, float | None]) -> tuple[Workload, tuple[str, ...]]:
    """The workload in requests, and each step from the buyer's unit to it."""
    inp = require_positive_field("input_tokens", numbers["input_tokens"])
    out = require_positive_field("output_tokens", numbers["output_tokens"])
    common = {
        "input_tokens": inp,
        "output_tokens": out,
        "peak_to_average": _or(numbers["peak_to_average"], 1.0),
        "cache_hit_rate": _or(numbers["cache_hit_rate"], 0.0),
        "headroom": _or(numbers["headroom"], 0.0),
    }
    steps: list[str] = []
    if unit == "peak_requests_per_s":
        peak = require_positive_field("peak_requests_per_s", numbers["peak_requests_per_s"])
        return Workload(peak_requests_per_s=peak, **common), ()
    if unit == "tokens_per_day":
        total = require_positive_field("tokens_per_day", numbers["tokens_per_day"])
        per_day = total / (inp + out)
        steps.append(
            f"{_n(total)} tokens/day ÷ ({_n(inp)} input + {_n(out)} output) tokens/request "
            f"= {_n(per_day)} requests/day"
        )
    elif unit == "io_tokens_per_day":
        ins = require_positive_field("input_tokens_per_day", numbers["input_tokens_per_day"])
        outs = require_positive_field("output_tokens_per_day", numbers["output_tokens_per_day"])
        by_in, by_out = ins / inp, outs / out
        per_day = max(by_in, by_out)
        steps.append(
            f"{_n(ins)} input tokens/day ÷ {_n(inp)} = {_n(by_in)} requests/day; "
            f"{_n(outs)} output tokens/day ÷ {_n(out)} = {_n(by_out)} requests/day"
        )
        if abs(by_in - by_out) > 0.01 * per_day:
            steps.append(f"the two disagree: sized for the larger, {_n(per_day)} requests/day")
    else:
        per_day = require_positive_field("requests_per_day", numbers["requests_per_day"])
    return Workload(requests_per_day=per_day, **common), tuple(steps)


def length_mix(text: str, shapes: Mapping[str, tuple[float, float]]) -> tuple[float, float, str]:
    """The request-weighted mean input and output tokens of a mix, and the step in words.

    Sized on the mean: a deployment's throughput was measured at one shape, so a mix is
    priced as its average request (the rows warn when that differs from what was measured).
    """
    entries = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        shape, _, weight_text = part.rpartition(":") if ":" in part else (part, "", "1")
        try:
            weight = float(weight_text)
        except ValueError:
            raise CostInputError("length_mix", f"{part!r}: the share must be a number") from None
        if not math.isfinite(weight) or weight <= 0:
            raise CostInputError("length_mix", f"{part!r}: the share must be above zero")
        if shape in shapes:
            tokens = shapes[shape]
        else:
            inp, _, out = shape.partition("/")
            try:
                tokens = (float(inp), float(out))
            except ValueError:
                known = ", ".join(sorted(shapes)) or "none"
                raise CostInputError(
                    "length_mix",
                    f"{shape!r} is neither input/output tokens (20000/1000) nor a scenario "
                    f"(known: {known})",
                ) from None
            if not all(math.isfinite(t) and t > 0 for t in tokens):
                raise CostInputError("length_mix", f"{shape!r}: token counts must be above zero")
        entries.append((shape, tokens, weight))
    if not entries:
        raise CostInputError("length_mix", "give at least one length and its share")
    total = sum(weight for *_, weight in entries)
    mean_in = sum(t[0] * w for _, t, w in entries) / total
    mean_out = sum(t[1] * w for _, t, w in entries) / total
    parts = " + ".join(
        f"{w / total:.0%} × ({_n(t[0])} in / {_n(t[1])} out{f', {s}' if s in shapes else ''})"
        for s, t, w in entries
    )
    return (
        mean_in,
        mean_out,
        f"length mix {parts} = {_n(mean_in)} in / {_n(mean_out)} out per request on average",
    )


def require_positive_field(name: str, value: float | None) -> float:
    if value is None:
        raise CostInputError(name, "is required")
    if not value > 0:
        raise CostInputError(name, f"must be greater than zero (got {value:g})")
    return value


def _load_steps(workload: Workload, peak: float, kind: TokenKind) -> tuple[str, ...]:
    steps = []
    if workload.requests_per_day is not None:
        average = workload.requests_per_day / SECONDS_PER_DAY
        steps.append(
            f"{_n(workload.requests_per_day)} requests/day ÷ 86,400 s = {_n(average)} requests/s "
            f"on average; × peak ÷ average {workload.peak_to_average:g} = {_n(peak)} requests/s "
            "at peak"
        )
    sized = peak * (1 + workload.headroom)
    per_request = {
        TokenKind.INPUT: workload.input_tokens,
        TokenKind.OUTPUT: workload.output_tokens,
        TokenKind.TOTAL: workload.input_tokens + workload.output_tokens,
    }[kind]
    steps.append(
        f"{_n(peak)} requests/s × (1 + headroom {workload.headroom:g}) = {_n(sized)} requests/s "
        f"× {_n(per_request)} {kind.value} tokens/request = {_n(sized * per_request)} "
        f"{kind.value} tok/s to size for"
    )
    return tuple(steps)


def _capex_price(
    accelerator: str,
    numbers: Mapping[str, float | None],
    book: Mapping[str, AcceleratorPrices],
    errors: list[FieldError],
) -> GpuHourCost | None:
    """$/GPU-hr from the capex + opex fields, when an accelerator is chosen for it."""
    if not accelerator:
        return None
    if numbers["gpu_purchase_usd"] is None:
        if not any(e.field == "gpu_purchase_usd" for e in errors):
            errors.append(FieldError("gpu_purchase_usd", "is required for a capex + opex price"))
        return None
    kw = numbers["kw_per_gpu"]
    if kw is None:
        entry = {sku.upper(): b for sku, b in book.items()}.get(accelerator)
        kw = entry.all_in_kw if entry else None
    if kw is None:
        errors.append(
            FieldError("kw_per_gpu", f"is required: no all-in kW known for {accelerator}")
        )
        return None
    try:
        return capex_opex_usd_per_gpu_hour(
            CapexOpex(
                gpu_purchase_usd=numbers["gpu_purchase_usd"],
                server_share_usd=_or(numbers["server_share_usd"], 0.0),
                depreciation_years=_or(numbers["depreciation_years"], 0.0),
                kw_per_gpu=kw,
                usd_per_kwh=_or(numbers["usd_per_kwh"], 0.0),
                pue=_or(numbers["pue"], 1.0),
                hosting_usd_per_month=_or(numbers["hosting_usd_per_month"], 0.0),
                utilization=_or(numbers["utilization"], 1.0),
            )
        )
    except CostInputError as error:
        errors.append(FieldError(error.field, error.message))
        return None


def _or(value: float | None, default: float) -> float:
    return default if value is None else value


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

    @property
    def usd_range(self) -> tuple[float, float] | None:
        """Both readings of a figure whose token kind the source did not state: read as
        output tokens and as total tokens of the scenario's shape (low, high $/Mtok)."""
        if self.curve.token_kind != "unlabelled" or self.price is None or self.slo is None:
            return None
        tput = self.slo.tok_per_s_per_gpu
        shape = (self.curve.input_tokens, self.curve.output_tokens)
        if tput is None or not all(shape) or self.token_basis is None:
            return None
        readings = unstated_readings(
            tput, self.token_basis, input_tokens=shape[0], output_tokens=shape[1]
        )
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
    """Every deployment priced at the SLO and sized for the workload, cheapest first."""
    rows = [_row(curve, inputs, book) for curve in curves]
    ranked = sorted(
        rows,
        key=lambda row: (
            not row.ok,
            row.plan.usd_per_month if row.ok and row.plan else math.inf,
            row.usd_per_mtok if row.usd_per_mtok is not None else math.inf,
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
    result = best_throughput_at_slo(curve.points, inputs.slo)
    cost = (
        usd_per_mtok(price.usd_per_gpu_hour, result.tok_per_s_per_gpu)
        if result.tok_per_s_per_gpu is not None
        else None
    )
    unlabelled = curve.token_kind == "unlabelled"
    plan = _plan(curve, price, inputs, result)
    miss: SloMiss | None = None
    relaxed_plan: CapacityPlan | None = None
    if not result.meets and inputs.slo.bounds:
        miss = explain_miss(curve.points, inputs.slo)
        if miss.relaxed is not None:
            relaxed = best_throughput_at_slo(curve.points, miss.relaxed)
            if relaxed.meets:
                relaxed_plan = _plan(curve, price, inputs, relaxed)
    if unlabelled:
        plan = _with_warning(
            plan,
            "the source does not say which tokens its tok/s counts: $/Mtok is shown read "
            f"as output and as total tokens; GPUs are planned reading it as "
            f"{inputs.token_kind.value}",
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
        **_served_costs(plan, inputs.workload),  # type: ignore[arg-type]
        **_revenue(plan, inputs),  # type: ignore[arg-type]
    )


def _with_warning(plan: CapacityPlan, warning: str) -> CapacityPlan:
    return replace(plan, warnings=(*plan.warnings, warning))


EXPORT_COLUMNS = (
    "rank",
    "run_id",
    "deployment",
    "accelerator",
    "gpus",
    "engine",
    "quantization",
    "scenario",
    "provenance",
    "token_kind",
    "usd_per_gpu_hour",
    "price_source",
    "price_citation",
    "tok_per_s_per_gpu_at_slo",
    "throughput_at_slo",
    "usd_per_mtok",
    "gpus_needed",
    "nodes_needed",
    "usd_per_month",
    "usd_per_request",
    # What the page shows as "$/Mtok served": each kind carrying the whole bill, blended 3:1.
    "usd_per_mtok_input_served",
    "usd_per_mtok_output_served",
    "usd_per_mtok_blended_served",
    "best_for_accelerator",
    "revenue_per_month",
    "margin_per_month",
    "joules_per_token",
    "slo_miss",
    "nearest_slo_met",
    "usd_per_month_at_nearest_slo",
    "notes",
)


def export_records(rows: Sequence[Row], inputs: ProcurementInputs) -> list[dict[str, object]]:
    """One flat record per row, for CSV and JSON export."""
    records = []
    for rank, row in enumerate(rows, start=1):
        plan = row.plan
        notes = [row.problem] if row.problem else []
        notes += list(plan.warnings) if plan else []
        relaxed_ok = row.relaxed_plan is not None and row.relaxed_plan.feasible
        records.append(
            {
                "rank": rank if row.ok else None,
                "run_id": row.curve.run_id,
                "deployment": row.curve.label,
                "accelerator": row.curve.accelerator,
                "gpus": row.curve.gpus,
                "engine": row.curve.engine,
                "quantization": row.curve.quantization,
                "scenario": row.curve.scenario,
                "provenance": row.curve.provenance,
                "token_kind": inputs.token_kind.value,
                "usd_per_gpu_hour": row.price.usd_per_gpu_hour if row.price else None,
                "price_source": (
                    f"{row.price.tier}: {row.price.source}" if row.price else "no price"
                ),
                "price_citation": row.price.citation if row.price else "",
                "tok_per_s_per_gpu_at_slo": row.slo.tok_per_s_per_gpu if row.slo else None,
                "throughput_at_slo": (row.slo.provenance if row.slo else None) or "",
                "usd_per_mtok": row.usd_per_mtok,
                "gpus_needed": plan.gpus if plan else None,
                "nodes_needed": plan.nodes if plan else None,
                "usd_per_month": plan.usd_per_month if plan else None,
                "usd_per_request": row.usd_per_request,
                "usd_per_mtok_input_served": row.served_input_usd_per_mtok,
                "usd_per_mtok_output_served": row.served_output_usd_per_mtok,
                "usd_per_mtok_blended_served": row.served_blended_usd_per_mtok,
                "best_for_accelerator": row.best_for_accelerator,
                "revenue_per_month": row.revenue_per_month,
                "margin_per_month": row.margin_per_month,
                "joules_per_token": row.joules_per_token,
                "slo_miss": row.miss.describe() if row.miss else "",
                "nearest_slo_met": (
                    row.miss.relaxed.describe()
                    if row.miss and row.miss.relaxed and relaxed_ok
                    else ""
                ),
                "usd_per_month_at_nearest_slo": (
                    row.relaxed_plan.usd_per_month if relaxed_ok and row.relaxed_plan else None
                ),
                "notes": "; ".join(notes),
            }
        )
    return records


def cost_of_latency(
    rows: Sequence[Row], inputs: ProcurementInputs, *, steps: int = 10
) -> dict[str, list[tuple[float, float]]]:
    """$/month against the TTFT bound, per accelerator: for each bound (log-spaced between
    the lowest and highest TTFT any point reports, at the SLO's percentile), the cheapest
    plan among the accelerator's deployments, the SLO's other bounds kept."""
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
    low, high = values[0], values[-1]
    count = max(min(steps, len(values)), 1)
    limits = sorted(
        {low * (high / low) ** (i / (count - 1)) if count > 1 else low for i in range(count)}
    )
    others = tuple(b for b in inputs.slo.bounds if b.metric is not Metric.TTFT_S)
    best: dict[str, dict[float, float]] = {}
    for row in rows:
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
                    inputs.slo.min_success_rate,
                )
                try:
                    result = best_throughput_at_slo(row.curve.points, slo)
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
