"""The procurement calculator's inputs (ProcurementInputs) and the steps from the buyer's
figures to them: the workload in the buyer's units, a length mix, an own capex + opex price.
The page's query string is read by apps/costs/forms.py (ProcurementQuery).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from apps.costs.capacity import SECONDS_PER_DAY, Workload, workload_load
from apps.costs.formulas import (
    AcceleratorPrices,
    CapexOpex,
    CostInputError,
    GpuHourCost,
    Tier,
    TokenKind,
    capex_opex_usd_per_gpu_hour,
)
from apps.costs.slo import Slo

DEFAULTS: dict[str, str] = {
    "tier": Tier.OWNING_HYPERSCALER.value,
    # The reference price set, by date or name (apps/costs/reference.py); blank: the newest.
    "prices_as_of": "",
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
    # Filters on the rows: an engine's name, and a speculative method or "none" (blank: any).
    "engine": "",
    "spec": "",
    # The "which is cheaper at this SLO" question: its two accelerators (blank: the two
    # cheapest rows') and precision (blank: any), as GET /api/v1/compare/answer asks them.
    "a": "",
    "b": "",
    "precision": "",
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
TEXT_FIELDS = {
    "tier",
    "prices_as_of",
    "token_kind",
    "ttft_percentile",
    "capex_accelerator",
    "model",
    "scenario",
    "engine",
    "spec",
    "a",
    "b",
    "precision",
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
UNIT_FIELDS = {
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


def _n(value: float) -> str:
    """A figure as a buyer reads it: thousands separated, at most 4 significant digits
    past the point."""
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.4g}"


def sized_workload(
    unit: str, numbers: Mapping[str, float | None], kind: TokenKind
) -> tuple[Workload, tuple[str, ...]]:
    """The workload the plan sizes for, and each step from the buyer's figures to the tokens
    per second it needs."""
    workload, steps = workload_of(unit, numbers)
    load = workload_load(workload)
    return workload, steps + load_steps(workload, load.peak_requests_per_s, kind)


def workload_of(unit: str, numbers: Mapping[str, float | None]) -> tuple[Workload, tuple[str, ...]]:
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


def load_steps(workload: Workload, peak: float, kind: TokenKind) -> tuple[str, ...]:
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


def capex_price(
    accelerator: str,
    numbers: Mapping[str, float | None],
    book: Mapping[str, AcceleratorPrices],
) -> GpuHourCost | None:
    """$/GPU-hr from the capex + opex fields, when an accelerator is chosen for it; the
    all-in kW comes from `book` where the buyer left it out."""
    if not accelerator:
        return None
    if numbers["gpu_purchase_usd"] is None:
        raise CostInputError("gpu_purchase_usd", "is required for a capex + opex price")
    kw = numbers["kw_per_gpu"]
    if kw is None:
        entry = {sku.upper(): b for sku, b in book.items()}.get(accelerator)
        kw = entry.all_in_kw if entry else None
    if kw is None:
        raise CostInputError("kw_per_gpu", f"is required: no all-in kW known for {accelerator}")
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


def _or(value: float | None, default: float) -> float:
    return default if value is None else value
