"""Cost formulas: $/Mtok, $/GPU-hr (tier or capex + opex), energy per token.

Pure functions, no I/O. Every bad input raises `CostInputError` naming the field, so
callers (API, pages) can answer 4xx with the field and never show NaN or inf.

Conventions (docs/methodology.md, "$/Mtok" and "Prices"):

- $/Mtok of a token kind = price_per_gpu_hour / (kind_tok_per_s_per_gpu * 3600 / 1e6).
  Each kind (input, output, total) carries the whole GPU cost: "$/Mtok output" is what an
  output token costs if output tokens paid for everything.
- Blended $/Mtok = the mix-weighted mean of the input and output figures, 3 input : 1
  output unless the caller gives a mix (the usual price-sheet convention).
- When the user prices cached input tokens apart, the cached tokens pay that price and
  the rest of the GPU cost falls on the uncached input tokens.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from apps.errors import FieldRefused
from workers import figures

SECONDS_PER_HOUR = 3600.0
HOURS_PER_YEAR = 8760.0
HOURS_PER_MONTH = HOURS_PER_YEAR / 12.0  # 730
TOKENS_PER_MTOK = 1_000_000.0


class CostInputError(FieldRefused):
    """A cost input that cannot give a finite, meaningful answer."""


class TokenKind(StrEnum):
    INPUT = "input"
    OUTPUT = "output"
    TOTAL = "total"


class Tier(StrEnum):
    OWNING_HYPERSCALER = "owning_hyperscaler"
    OWNING_NEOCLOUD = "owning_neocloud"
    RENTAL_3YR = "rental_3yr"


def require_positive(field: str, value: float) -> float:
    """`value` as a float if finite and > 0, else CostInputError naming `field`."""
    number = _finite(field, value)
    if number <= 0:
        raise CostInputError(field, f"must be greater than zero (got {number:g})")
    return number


def require_non_negative(field: str, value: float) -> float:
    number = _finite(field, value)
    if number < 0:
        raise CostInputError(field, f"must not be negative (got {number:g})")
    return number


def require_fraction(field: str, value: float, *, allow_one: bool = True) -> float:
    """A share in [0, 1] (or [0, 1) when `allow_one` is false)."""
    number = _finite(field, value)
    upper_ok = number <= 1 if allow_one else number < 1
    if number < 0 or not upper_ok:
        bound = "1" if allow_one else "below 1"
        raise CostInputError(field, f"must be between 0 and {bound} (got {number:g})")
    return number


def _finite(field: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CostInputError(field, f"must be a number (got {value!r})")
    number = float(value)
    if not math.isfinite(number):
        raise CostInputError(field, "must be a finite number")
    return number


# --- $/Mtok -------------------------------------------------------------------------------


def usd_per_mtok(usd_per_gpu_hour: float, tok_per_s_per_gpu: float) -> float:
    """$ per million tokens for one GPU at a price and a per-GPU throughput."""
    price = require_non_negative("usd_per_gpu_hour", usd_per_gpu_hour)
    throughput = require_positive("tok_per_s", tok_per_s_per_gpu)
    mtok_per_hour = throughput * SECONDS_PER_HOUR / TOKENS_PER_MTOK
    if mtok_per_hour == 0:  # a subnormal throughput rounds away to nothing
        raise CostInputError("tok_per_s", "is out of range: too small to price")
    return finite_result("tok_per_s", price / mtok_per_hour)


def finite_result(field: str, value: float) -> float:
    """`value` if finite; inputs at the edge of float range can overflow to inf."""
    if not math.isfinite(value):
        raise CostInputError(field, "is out of range: the result would not be a finite number")
    return value


def deployment_usd_per_mtok(usd_per_gpu_hour: float, gpus: int, tok_per_s: float) -> float:
    """$/Mtok for a deployment whose `tok_per_s` is the total across its `gpus`."""
    gpu_count = require_gpus(gpus)
    throughput = require_positive("tok_per_s", tok_per_s)
    return usd_per_mtok(usd_per_gpu_hour, figures.per_gpu(throughput, gpu_count))


def require_gpus(gpus: int) -> int:
    if isinstance(gpus, bool) or not isinstance(gpus, int):
        raise CostInputError("gpus", f"must be a whole number (got {gpus!r})")
    if gpus < 1:
        raise CostInputError("gpus", f"must be at least 1 (got {gpus})")
    return gpus


@dataclass(frozen=True, slots=True)
class Throughput:
    """Measured throughput of a whole deployment, tokens per second by kind.

    `cached_input_share` is the part of the input tokens served from the prefix cache
    (observed hit rate), used only when cached tokens are priced apart.
    """

    gpus: int
    input_tok_per_s: float
    output_tok_per_s: float
    cached_input_share: float = 0.0


@dataclass(frozen=True, slots=True)
class TokenMix:
    """Relative weights of input and output tokens in a blended price (3:1 by default)."""

    input_weight: float = 3.0
    output_weight: float = 1.0


@dataclass(frozen=True, slots=True)
class MtokCosts:
    """$/Mtok by kind for one deployment at one price."""

    usd_per_gpu_hour: float
    input: float
    output: float
    total: float
    blended: float
    mix: TokenMix
    # Set only when cached input tokens were priced apart.
    cached_input: float | None = None
    uncached_input: float | None = None


def mtok_costs(
    usd_per_gpu_hour: float,
    throughput: Throughput,
    *,
    mix: TokenMix | None = None,
    cached_input_usd_per_mtok: float | None = None,
) -> MtokCosts:
    """$/Mtok for input, output, total and blended tokens of one deployment."""
    price = require_non_negative("usd_per_gpu_hour", usd_per_gpu_hour)
    gpus = require_gpus(throughput.gpus)
    input_tps = require_positive("input_tok_per_s", throughput.input_tok_per_s)
    output_tps = require_positive("output_tok_per_s", throughput.output_tok_per_s)
    chosen_mix = mix or TokenMix()
    in_weight = require_non_negative("mix.input_weight", chosen_mix.input_weight)
    out_weight = require_non_negative("mix.output_weight", chosen_mix.output_weight)
    if in_weight + out_weight == 0:
        raise CostInputError("mix", "input and output weights cannot both be zero")

    input_cost = usd_per_mtok(price, figures.per_gpu(input_tps, gpus))
    cached_cost: float | None = None
    uncached_cost: float | None = None
    if cached_input_usd_per_mtok is not None:
        cached_cost = require_non_negative("cached_input_usd_per_mtok", cached_input_usd_per_mtok)
        uncached_cost = _uncached_input_cost(input_cost, cached_cost, throughput.cached_input_share)
    output_cost = usd_per_mtok(price, figures.per_gpu(output_tps, gpus))
    total_cost = usd_per_mtok(price, figures.per_gpu(input_tps + output_tps, gpus))
    # Pricing cached tokens apart only moves cost between input tokens: on average an
    # input token still pays `input_cost`, so the blend does not change.
    blended = (in_weight * input_cost + out_weight * output_cost) / (in_weight + out_weight)
    for name, value in (("blended", blended), ("uncached_input", uncached_cost or 0.0)):
        finite_result("cached_input_share" if name == "uncached_input" else "mix", value)
    return MtokCosts(
        usd_per_gpu_hour=price,
        input=input_cost,
        output=output_cost,
        total=total_cost,
        blended=blended,
        mix=TokenMix(in_weight, out_weight),
        cached_input=cached_cost,
        uncached_input=uncached_cost,
    )


def _uncached_input_cost(input_cost: float, cached_cost: float, cached_share: float) -> float:
    """$/Mtok an uncached input token pays once cached ones pay `cached_cost`.

    The GPU cost of a million input tokens (`input_cost`) is split: the cached share pays
    `cached_cost` each, the uncached rest pays what is left.
    """
    share = require_fraction("cached_input_share", cached_share, allow_one=False)
    remainder = input_cost - share * cached_cost
    if remainder < 0:
        raise CostInputError(
            "cached_input_usd_per_mtok",
            f"cached tokens at this price would pay more than the whole input cost "
            f"(${input_cost:.4f}/Mtok)",
        )
    return remainder / (1.0 - share)


def unstated_readings(
    unlabelled_tok_s: float, basis: TokenKind, *, input_tokens: int, output_tokens: int
) -> tuple[float, float]:
    """A published tok/s whose kind the source does not state, as `basis` tok/s under both
    readings: (read as output tokens, read as total tokens), via the scenario's shape. The
    reading is workers.figures'; this checks the shape the way cost inputs are checked."""
    require_positive("input_tokens", input_tokens)
    require_positive("output_tokens", output_tokens)
    return figures.unstated_readings(unlabelled_tok_s, basis.value, input_tokens, output_tokens)


def readings_text(readings: tuple[float, float] | None) -> str:
    """Both readings of a figure of unstated kind as exports and the API write them: "low-high"
    (empty when the kind is stated), the same on the board's and the cost pages' exports."""
    return f"{readings[0]:.6g}-{readings[1]:.6g}" if readings else ""


@dataclass(frozen=True, slots=True)
class PricedThroughput:
    """A point's tok/s per GPU and $/Mtok of one basis. When the source did not state which
    tokens its figure counts, `low`/`high` hold both readings and `stated` is False."""

    basis: TokenKind
    tok_per_s_per_gpu: float | None
    usd_per_mtok: float | None
    stated: bool = True
    tok_low: float | None = None
    tok_high: float | None = None
    usd_low: float | None = None
    usd_high: float | None = None


THROUGHPUT_FIELDS = ("input_tok_s", "output_tok_s", "total_tok_s", "unlabelled_tok_s")


def throughputs(point: Mapping[str, Any] | object) -> dict[str, float | None]:
    """A point's four throughput figures, as `priced_throughput` takes them, from a Point or
    from a values() row: the one list of which figures price a point."""
    if isinstance(point, Mapping):
        return {name: point[name] for name in THROUGHPUT_FIELDS}
    return {name: getattr(point, name) for name in THROUGHPUT_FIELDS}


def priced_throughput(
    basis: TokenKind,
    *,
    gpus: int,
    usd_per_gpu_hour: float | None,
    input_tok_s: float | None = None,
    output_tok_s: float | None = None,
    total_tok_s: float | None = None,
    unlabelled_tok_s: float | None = None,
    input_tokens: int | None = None,
    output_tokens: int | None = None,
) -> PricedThroughput:
    """The one $/Mtok every page shows: a basis, a price and a point's throughputs."""

    def usd(tok_per_gpu: float | None) -> float | None:
        if not usd_per_gpu_hour or not tok_per_gpu:
            return None
        return usd_per_mtok(usd_per_gpu_hour, tok_per_gpu)

    reading = figures.throughput(
        basis.value,
        input_tok_s=input_tok_s,
        output_tok_s=output_tok_s,
        total_tok_s=total_tok_s,
        unlabelled_tok_s=unlabelled_tok_s,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
    )
    if reading.stated:
        tok = figures.per_gpu(reading.value, gpus)
        return PricedThroughput(basis, tok, usd(tok))
    low, high = figures.per_gpu(reading.low, gpus), figures.per_gpu(reading.high, gpus)
    if low is None or high is None:
        return PricedThroughput(basis, None, None, stated=False)
    readings = (low, high)
    usd_readings = sorted(u for u in (usd(readings[0]), usd(readings[1])) if u is not None)
    return PricedThroughput(
        basis,
        readings[0],  # ranks by the lower reading: a claim is never read up
        usd_readings[-1] if usd_readings else None,
        stated=False,
        tok_low=readings[0],
        tok_high=readings[1],
        usd_low=usd_readings[0] if usd_readings else None,
        usd_high=usd_readings[-1] if usd_readings else None,
    )


def blended_usd_per_mtok(
    input_usd_per_mtok: float, output_usd_per_mtok: float, mix: TokenMix | None = None
) -> float:
    """The mix-weighted mean of an input and an output $/Mtok (3:1 by default)."""
    chosen = mix or TokenMix()
    in_price = require_non_negative("input_usd_per_mtok", input_usd_per_mtok)
    out_price = require_non_negative("output_usd_per_mtok", output_usd_per_mtok)
    in_weight = require_non_negative("mix.input_weight", chosen.input_weight)
    out_weight = require_non_negative("mix.output_weight", chosen.output_weight)
    if in_weight + out_weight == 0:
        raise CostInputError("mix", "input and output weights cannot both be zero")
    return (in_weight * in_price + out_weight * out_price) / (in_weight + out_weight)


# --- $/GPU-hr -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AcceleratorPrices:
    """The price book of one accelerator: $/GPU-hr by tier name, and all-in kW per GPU.

    Tier names are the reference ones (`Tier`) or an organization's own; `sources` says
    where each price came from, so every figure can say which price it used.
    """

    sku: str
    usd_per_gpu_hour: dict[str, float]
    all_in_kw: float | None
    sources: dict[str, str] = field(default_factory=dict)
    citations: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TierPrice:
    accelerator: str
    tier: str
    usd_per_gpu_hour: float
    source: str
    citation: str = ""


def tier_price(prices: Mapping[str, AcceleratorPrices], accelerator: str, tier: str) -> TierPrice:
    """The $/GPU-hr of `accelerator` at `tier` from a price book keyed by SKU (any case)."""
    wanted = (accelerator or "").strip()
    by_upper = {sku.upper(): book for sku, book in prices.items()}
    book = by_upper.get(wanted.upper())
    if book is None:
        known = ", ".join(sorted(prices)) or "none"
        message = f"unknown accelerator {wanted!r} (known: {known})" if wanted else "is required"
        raise CostInputError("accelerator", message)
    name = str(tier.value if isinstance(tier, Tier) else tier or "").strip()
    if name not in book.usd_per_gpu_hour:
        known_tiers = ", ".join(sorted(book.usd_per_gpu_hour)) or "none"
        message = (
            f"no {name!r} price for {book.sku} (known: {known_tiers})" if name else "is required"
        )
        raise CostInputError("tier", message)
    return TierPrice(
        accelerator=book.sku,
        tier=name,
        usd_per_gpu_hour=book.usd_per_gpu_hour[name],
        source=book.sources.get(name, ""),
        citation=book.citations.get(name, ""),
    )


USER_PRICE_SOURCE = "your own price"


def choose_price(
    prices: Mapping[str, AcceleratorPrices],
    *,
    usd_per_gpu_hour: float | None = None,
    accelerator: str | None = None,
    tier: str | None = None,
) -> TierPrice:
    """The user's own $/GPU-hr when given, else the price of `accelerator` at `tier`."""
    if usd_per_gpu_hour is not None:
        price = require_non_negative("usd_per_gpu_hour", usd_per_gpu_hour)
        return TierPrice(
            accelerator=(accelerator or "").strip(),
            tier="own",
            usd_per_gpu_hour=price,
            source=USER_PRICE_SOURCE,
        )
    if not accelerator and not tier:
        raise CostInputError(
            "usd_per_gpu_hour", "give usd_per_gpu_hour, or an accelerator and a price tier"
        )
    return tier_price(prices, accelerator or "", tier or "")


def tier_usd_per_gpu_hour(
    prices: Mapping[str, AcceleratorPrices], accelerator: str, tier: str
) -> float:
    """The $/GPU-hr of `accelerator` at `tier`; see `tier_price`."""
    return tier_price(prices, accelerator, tier).usd_per_gpu_hour


@dataclass(frozen=True, slots=True)
class CapexOpex:
    """What one GPU costs to own and run.

    `server_share_usd` is this GPU's share of the server around it (chassis, CPUs,
    network, storage). `kw_per_gpu` is all-in per GPU; with an all-in figure that already
    includes the facility, leave `pue` at 1.0. `utilization` is the share of hours that do
    paid work, so idle hours are charged to the busy ones.
    """

    gpu_purchase_usd: float
    server_share_usd: float
    depreciation_years: float
    kw_per_gpu: float
    usd_per_kwh: float
    pue: float = 1.0
    hosting_usd_per_month: float = 0.0
    utilization: float = 1.0


@dataclass(frozen=True, slots=True)
class GpuHourCost:
    """$/GPU-hr from capex + opex, with the parts that make it up."""

    depreciation: float
    power: float
    hosting: float
    utilization: float
    usd_per_gpu_hour: float


def capex_opex_usd_per_gpu_hour(inputs: CapexOpex) -> GpuHourCost:
    """$/GPU-hr: straight-line depreciation + power + hosting, divided by utilization."""
    capex = require_non_negative("gpu_purchase_usd", inputs.gpu_purchase_usd)
    capex += require_non_negative("server_share_usd", inputs.server_share_usd)
    years = require_positive("depreciation_years", inputs.depreciation_years)
    kw = require_non_negative("kw_per_gpu", inputs.kw_per_gpu)
    usd_per_kwh = require_non_negative("usd_per_kwh", inputs.usd_per_kwh)
    pue = _finite("pue", inputs.pue)
    if pue < 1:
        raise CostInputError("pue", f"must be at least 1.0 (got {pue:g})")
    hosting = require_non_negative("hosting_usd_per_month", inputs.hosting_usd_per_month)
    utilization = require_positive("utilization", inputs.utilization)
    if utilization > 1:
        raise CostInputError("utilization", f"must be at most 1 (got {utilization:g})")

    depreciation = capex / (years * HOURS_PER_YEAR)
    power = kw * pue * usd_per_kwh
    hosting_hourly = hosting / HOURS_PER_MONTH
    total = finite_result("utilization", (depreciation + power + hosting_hourly) / utilization)
    return GpuHourCost(
        depreciation=depreciation,
        power=power,
        hosting=hosting_hourly,
        utilization=utilization,
        usd_per_gpu_hour=total,
    )


# --- energy ------------------------------------------------------------------------------


def joules_per_token(kw_per_gpu: float, gpus: int, tok_per_s: float) -> float:
    """Energy per token: watts drawn by the deployment over tokens per second (W/(tok/s))."""
    kw = require_positive("kw_per_gpu", kw_per_gpu)
    gpu_count = require_gpus(gpus)
    throughput = require_positive("tok_per_s", tok_per_s)
    joules = finite_result("tok_per_s", kw * 1000.0 * gpu_count / throughput)
    if joules == 0:
        raise CostInputError("tok_per_s", "is out of range: the energy per token rounds to zero")
    return joules


def tok_per_s_per_mw(kw_per_gpu: float, gpus: int, tok_per_s: float) -> float:
    """Tokens per second one megawatt of (all-in) power buys at this throughput."""
    return finite_result("tok_per_s", 1_000_000.0 / joules_per_token(kw_per_gpu, gpus, tok_per_s))
