"""The procurement calculator's inputs: the page's query string (its whole state) parsed into
ProcurementInputs, with bad values as field errors, never as exceptions.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from apps.costs.capacity import SECONDS_PER_DAY, Workload, workload_load
from apps.costs.formulas import (
    AcceleratorPrices,
    CapexOpex,
    CostInputError,
    GpuHourCost,
    Tier,
    TokenKind,
    capex_opex_usd_per_gpu_hour,
    require_non_negative,
)
from apps.costs.slo import Slo

if TYPE_CHECKING:  # the page's reader of prices; this module stays free of the database
    from apps.costs.prices import ProfiledQuery

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
