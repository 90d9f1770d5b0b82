"""The economics of a measured point, as pure functions (no I/O): revenue, margin per GPU-hour
and per MW-year, and a fleet from a power budget (DESIGN.md, "Cost model").

Every tok/s/GPU here is over **all** the deployment's GPUs (prefill and decode pools together),
as apps/costs/formulas.priced_throughput gives it; nothing here divides by a pool.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from apps.costs.formulas import (
    HOURS_PER_MONTH,
    HOURS_PER_YEAR,
    SECONDS_PER_HOUR,
    TOKENS_PER_MTOK,
    CostInputError,
    finite_result,
    require_fraction,
    require_non_negative,
    require_positive,
)

SECONDS_PER_DAY = 86_400.0
KW_PER_MW = 1_000.0


@dataclass(frozen=True, slots=True)
class TokenPrices:
    """A model's token list prices, $ per million tokens."""

    input: float
    cached_input: float
    output: float


@dataclass(frozen=True, slots=True)
class Terms:
    """How revenue is earned: the share of hours that serve paid tokens, the share of revenue
    owed to the model's licensor, and the share of input tokens served from the cache."""

    utilisation: float
    licence_share: float
    cache_hit_rate: float


@dataclass(frozen=True, slots=True)
class Margin:
    """One GPU-hour of a point: its revenue (after the licence share), its cost, the margin,
    and the same margin over a megawatt-year of all-in power."""

    revenue_per_gpu_hour: float  # after the licence share
    gross_revenue_per_gpu_hour: float  # before it
    cost_per_gpu_hour: float
    margin_per_gpu_hour: float
    gpu_hours_per_mw_year: float
    margin_per_mw_year: float
    revenue_per_mw_year: float


def revenue_per_gpu_hour(
    input_tok_s_per_gpu: float, output_tok_s_per_gpu: float, prices: TokenPrices, terms: Terms
) -> tuple[float, float]:
    """(gross, net of the licence share) $ per GPU-hour: utilisation × 3,600 × (input tok/s/GPU
    × (uncached share × input price + cached share × cached price) + output tok/s/GPU × output
    price) / 10⁶."""
    tok_in = require_non_negative("input_tok_s_per_gpu", input_tok_s_per_gpu)
    tok_out = require_non_negative("output_tok_s_per_gpu", output_tok_s_per_gpu)
    utilisation = require_fraction("utilisation", terms.utilisation)
    licence = require_fraction("licence_share", terms.licence_share)
    cached = require_fraction("cache_hit_rate", terms.cache_hit_rate)
    in_price = require_non_negative("input_price", prices.input)
    cached_price = require_non_negative("cached_input_price", prices.cached_input)
    out_price = require_non_negative("output_price", prices.output)
    per_second = tok_in * ((1 - cached) * in_price + cached * cached_price) + tok_out * out_price
    gross = finite_result("prices", utilisation * SECONDS_PER_HOUR * per_second / TOKENS_PER_MTOK)
    return gross, gross * (1 - licence)


def gpu_hours_per_mw_year(all_in_kw_per_gpu: float, pue: float = 1.0) -> float:
    """GPU-hours one megawatt of facility power buys in a year: 1,000 / (all-in kW × PUE) ×
    8,760 (PUE 1 when the all-in figure includes the facility already)."""
    kw = require_positive("all_in_kw", all_in_kw_per_gpu) * require_pue(pue)
    return finite_result("all_in_kw", KW_PER_MW / kw * HOURS_PER_YEAR)


def require_pue(pue: float) -> float:
    number = require_positive("pue", pue)
    if number < 1:
        raise CostInputError("pue", f"must be at least 1.0 (got {number:g})")
    return number


def margin(
    input_tok_s_per_gpu: float,
    output_tok_s_per_gpu: float,
    *,
    prices: TokenPrices,
    terms: Terms,
    usd_per_gpu_hour: float,
    all_in_kw_per_gpu: float | None,
    pue: float = 1.0,
) -> Margin:
    """A point's margin per GPU-hour, and per MW-year of all-in power (an accelerator with no
    known all-in power is a CostInputError naming all_in_kw)."""
    gross, net = revenue_per_gpu_hour(input_tok_s_per_gpu, output_tok_s_per_gpu, prices, terms)
    cost = require_non_negative("usd_per_gpu_hour", usd_per_gpu_hour)
    if all_in_kw_per_gpu is None:
        raise CostInputError("all_in_kw", "no all-in power per GPU is known for this accelerator")
    hours = gpu_hours_per_mw_year(all_in_kw_per_gpu, pue)
    return Margin(
        revenue_per_gpu_hour=net,
        gross_revenue_per_gpu_hour=gross,
        cost_per_gpu_hour=cost,
        margin_per_gpu_hour=net - cost,
        gpu_hours_per_mw_year=hours,
        margin_per_mw_year=(net - cost) * hours,
        revenue_per_mw_year=net * hours,
    )


@dataclass(frozen=True, slots=True)
class Fleet:
    """What a power budget buys of one configuration, served at one measured point."""

    gpus: int
    nodes: int
    gpus_per_node: int
    kw_per_gpu: float  # all-in × PUE
    concurrent_users: float
    output_tokens_per_day: float
    input_tokens_per_day: float
    requests_per_day: float | None
    revenue_per_month: float
    cost_per_month: float
    margin_per_month: float


def fleet(
    megawatts: float,
    *,
    all_in_kw_per_gpu: float,
    gpus_per_node: int,
    input_tok_s_per_gpu: float,
    output_tok_s_per_gpu: float,
    interactivity: float,
    output_tokens_per_request: int | None,
    margin_per_gpu_hour: Margin,
    utilisation: float,
    pue: float = 1.0,
) -> Fleet:
    """GPUs = ⌊MW × 1,000 / (all-in kW × PUE)⌋ rounded down to whole nodes; concurrent users
    at the point = GPUs × output tok/s/GPU ÷ the point's interactivity (tok/s/user); tokens and
    requests per day at the utilisation; $/month over HOURS_PER_MONTH hours."""
    mw = require_positive("megawatts", megawatts)
    kw = require_positive("all_in_kw", all_in_kw_per_gpu) * require_pue(pue)
    if gpus_per_node < 1:
        raise CostInputError("gpus_per_node", f"must be at least 1 (got {gpus_per_node})")
    per_user = require_positive("interactivity", interactivity)
    busy = require_fraction("utilisation", utilisation)
    # A hair of tolerance: 1,000 / 2.5 is 400 GPUs, not 399 through a float's last bit.
    raw = math.floor(mw * KW_PER_MW / kw + 1e-9)
    nodes = raw // gpus_per_node
    gpus = nodes * gpus_per_node
    out_day = gpus * output_tok_s_per_gpu * SECONDS_PER_DAY * busy
    in_day = gpus * input_tok_s_per_gpu * SECONDS_PER_DAY * busy
    requests = out_day / output_tokens_per_request if output_tokens_per_request else None
    hours = gpus * HOURS_PER_MONTH
    return Fleet(
        gpus=gpus,
        nodes=nodes,
        gpus_per_node=gpus_per_node,
        kw_per_gpu=kw,
        concurrent_users=gpus * output_tok_s_per_gpu / per_user,
        output_tokens_per_day=out_day,
        input_tokens_per_day=in_day,
        requests_per_day=requests,
        revenue_per_month=margin_per_gpu_hour.revenue_per_gpu_hour * hours,
        cost_per_month=margin_per_gpu_hour.cost_per_gpu_hour * hours,
        margin_per_month=margin_per_gpu_hour.margin_per_gpu_hour * hours,
    )
