"""Reads for the economics pages and API: each accelerator's answer-rule point for a model,
scenario and SLO tier, priced from the one price book, with its revenue, margin and fleet.

Nothing here chooses a point or computes a per-GPU figure itself: the points come from
apps/costs/answer_selectors (the configurations' latest complete sweeps, measured only, tok/s
per GPU over all deployed GPUs by apps/costs/formulas.priced_throughput), the choice from
apps/costs/answer.best_side (the one rule), the $/GPU-hr from gpu_hour_prices / price_book,
the SLO from apps/costs/slo_query (the named tiers). The arithmetic is apps/economics/formulas.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from apps.accounts.models import Organization
from apps.catalog.models import Accelerator, Deployment, Scenario
from apps.costs.answer import Facts, Measured, Side, best_side, matches
from apps.costs.answer_selectors import (
    answer_runs,
    answer_scenario,
    gpu_hour_prices,
    measured_of,
    measured_points,
)
from apps.costs.formulas import CostInputError, TokenKind
from apps.costs.reference import TIER_LABELS, PriceSet
from apps.costs.selectors import PriceBook, price_book
from apps.costs.slo import Metric
from apps.costs.slo_query import AskedSlo, SloAsk
from apps.economics.formulas import Fleet, Margin, Terms, TokenPrices, fleet, margin
from apps.runs.models import Point, Run
from workers import accelerator_specs

TOKEN_PRICES_FILE = Path(__file__).parent / "token_prices.json"
# The defaults every economics page states beside its figures (and the API returns).
DEFAULT_MODEL = "DeepSeek-R1-0528"
DEFAULT_SCENARIO = "8k-1k"
DEFAULT_UTILISATION = 0.7
UTILISATION_WHY = (
    "the share of hours a serving fleet sells tokens at the measured load; traffic has peaks "
    "and troughs, so no fleet sells every hour at its SLO's best point"
)
DEFAULT_LICENCE_SHARE = 0.0
LICENCE_WHY = "DeepSeek-R1's weights are MIT-licensed: no share of revenue is owed by default"
DEFAULT_CACHE_HIT_RATE = 0.0
CACHE_WHY = (
    "the point's observed prefix-cache hit rate where its run reports one; else this share "
    "(InferenceX's prompts are random, so they share no prefix)"
)
# A node's GPUs (rounding a fleet down to whole nodes): an HGX/OAM board carries 8; an
# accelerator whose node differs states it in the accelerators file (`gpus_per_node`: a
# Grace-Blackwell compute tray carries 4, an NVL72 rack is 18 trays).
DEFAULT_GPUS_PER_NODE = 8
DENOMINATOR = "all deployed GPUs (prefill and decode pools together)"
FIRST_TOKEN_CAPS_S = (1.0, 2.0, 5.0, 10.0)


def gpus_per_node(sku: str) -> int:
    entry = accelerator_specs.entry(sku) or {}
    return int(entry.get("gpus_per_node", DEFAULT_GPUS_PER_NODE))


# --- token prices ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ListPrice:
    """A model's shipped token list price, with where it was read."""

    model: str
    offer: str
    prices: TokenPrices
    source_url: str
    read: str
    in_force: str
    notes: tuple[str, ...] = ()


@cache
def list_prices() -> dict[str, ListPrice]:
    """The shipped token list prices by model name (token_prices.json)."""
    data = json.loads(TOKEN_PRICES_FILE.read_text())
    return {
        entry["model"]: ListPrice(
            model=entry["model"],
            offer=entry["offer"],
            prices=TokenPrices(
                input=float(entry["usd_per_mtok"]["input"]),
                cached_input=float(entry["usd_per_mtok"]["cached_input"]),
                output=float(entry["usd_per_mtok"]["output"]),
            ),
            source_url=entry["source_url"],
            read=entry["read"],
            in_force=entry["in_force"],
            notes=tuple(entry.get("notes", ())),
        )
        for entry in data["models"]
    }


@dataclass(frozen=True, slots=True)
class PricedTokens:
    """The token prices that price revenue, and where each came from."""

    prices: TokenPrices
    list_price: ListPrice | None
    overridden: tuple[str, ...]

    def describe(self) -> str:
        p = self.prices
        text = (
            f"input ${p.input:g}, cached input ${p.cached_input:g}, output ${p.output:g} per Mtok"
        )
        if self.list_price and len(self.overridden) < 3:
            text += f" ({self.list_price.offer}, read {self.list_price.read}"
            text += f"; {', '.join(self.overridden)} yours)" if self.overridden else ")"
        elif self.overridden:
            text += " (yours)"
        return text


def token_prices(
    model: str,
    *,
    input_price: float | None = None,
    cached_input_price: float | None = None,
    output_price: float | None = None,
) -> PricedTokens:
    """The model's list price with any of the visitor's own on top; a model with no shipped
    price needs all three, else a CostInputError names the first one missing."""
    shipped = list_prices().get(model)
    given = {
        "input_price": input_price,
        "cached_input_price": cached_input_price,
        "output_price": output_price,
    }
    base = shipped.prices if shipped else None
    values: dict[str, float] = {}
    for name, value in given.items():
        if value is not None:
            values[name] = value
        elif base is not None:
            values[name] = getattr(base, name.removesuffix("_price"))
        else:
            raise CostInputError(
                name, f"no list price ships for {model!r}: give input, cached input and output"
            )
    return PricedTokens(
        TokenPrices(values["input_price"], values["cached_input_price"], values["output_price"]),
        shipped,
        tuple(name for name, value in given.items() if value is not None),
    )


# --- the question and the chosen points -----------------------------------------------------


@dataclass(frozen=True, slots=True)
class EconAsk:
    """An economics question before the data is read."""

    model: str = DEFAULT_MODEL
    scenario: str = DEFAULT_SCENARIO
    facts: Facts = field(default_factory=Facts)
    slo: SloAsk = field(default_factory=SloAsk)
    price_tier: str = "owning_hyperscaler"
    own_prices: Mapping[str, float] = field(default_factory=dict)
    prices_as_of: str = ""
    input_price: float | None = None
    cached_input_price: float | None = None
    output_price: float | None = None
    utilisation: float = DEFAULT_UTILISATION
    licence_share: float = DEFAULT_LICENCE_SHARE
    cache_hit_rate: float | None = None  # None: the point's observed rate, else the default
    pue: float = 1.0
    megawatts: float = 1.0
    gpus_per_node: int | None = None  # None: the accelerator's (gpus_per_node)


@dataclass(frozen=True, slots=True)
class Chosen:
    """One accelerator's answer-rule point at the asked SLO, with every figure the economics
    take from it (per GPU over all deployed GPUs), its price and power; or why it has none."""

    sku: str
    vendor: str
    side: Side
    input_tok_s_per_gpu: float | None = None
    total_tok_s_per_gpu: float | None = None
    usd_per_gpu_hour: float | None = None
    price_source: str = ""
    all_in_kw: float | None = None
    pools: str = ""
    cache_hit_rate: float = DEFAULT_CACHE_HIT_RATE
    cache_source: str = ""
    reason: str = ""

    @property
    def point(self) -> Measured | None:
        return self.side.point

    @property
    def output_tok_s_per_gpu(self) -> float | None:
        return self.side.tok_s_per_gpu


@dataclass(frozen=True, slots=True)
class Reading:
    """Every accelerator's chosen point for one question, and what priced them."""

    asked: EconAsk
    scenario: Scenario
    slo: AskedSlo
    price_set: PriceSet
    tier_label: str
    tokens: PricedTokens
    rows: tuple[Chosen, ...]


def pools_text(deployment: Deployment) -> str:
    """'36 GPUs: 4 prefill + 32 decode (1P TP4×EP4 + 4D TP8×EP8)' or '8 GPUs, aggregated'."""
    if deployment.disaggregated:
        prefill = deployment.prefill_gpus if deployment.prefill_gpus is not None else "?"
        decode = deployment.decode_gpus if deployment.decode_gpus is not None else "?"
        return (
            f"{deployment.gpus} GPUs: {prefill} prefill + {decode} decode "
            f"({deployment.parallelism_label})"
        )
    return f"{deployment.gpus} GPUs, aggregated"


def _scenario(slug: str, org: Organization | None) -> Scenario:
    found = answer_scenario(slug=slug, org=org)
    if found is None:
        raise CostInputError("scenario", f"no visible run has scenario {slug!r}")
    return found


def _other_bases(points: Sequence[Measured]) -> dict[tuple[int, TokenKind], float | None]:
    """(point id, basis) -> tok/s/GPU of the chosen points on the input and total bases, by the
    same reading that gave their output figure (measured_of, over all deployed GPUs)."""
    runs = Run.objects.filter(pk__in={p.run_id for p in points})
    wanted = {p.point_id for p in points}
    found: dict[tuple[int, TokenKind], float | None] = {}
    for basis in (TokenKind.INPUT, TokenKind.TOTAL):
        for other in measured_of(runs, basis=basis, prices={}, current=None):
            if other.point_id in wanted:
                found[other.point_id, basis] = other.tok_s_per_gpu
    return found


def _gpu_hour_prices(
    asked: EconAsk, org: Organization | None
) -> tuple[PriceBook, dict[str, float]]:
    """The price book in force and each SKU's $/GPU-hr at the asked tier (own prices on top),
    as every money page prices; a tier no accelerator has is a CostInputError naming it."""
    book = price_book(org=org, prices_as_of=asked.prices_as_of)
    if not any(asked.price_tier in b.usd_per_gpu_hour for b in book.values()):
        known = ", ".join(sorted({t for b in book.values() for t in b.usd_per_gpu_hour}))
        raise CostInputError("tier", f"unknown price tier {asked.price_tier!r}; one of {known}")
    prices = gpu_hour_prices(
        org=org, tier=asked.price_tier, own=asked.own_prices, prices_as_of=asked.prices_as_of
    )
    return book, prices


def read(asked: EconAsk, *, org: Organization | None) -> Reading:
    """Each accelerator's answer-rule point for the question (output basis, the board's and
    the answer's), priced at the asked tier of the price set in force."""
    tokens = token_prices(
        asked.model,
        input_price=asked.input_price,
        cached_input_price=asked.cached_input_price,
        output_price=asked.output_price,
    )
    book, prices = _gpu_hour_prices(asked, org)
    scenario = _scenario(asked.scenario, org)
    slo = asked.slo.resolve(scenario)
    runs = answer_runs(org=org, model=asked.model, scenario=scenario)
    points = measured_points(runs, scenario=scenario, basis=TokenKind.OUTPUT, prices=prices)
    matching = [p for p in points if matches(p, asked.facts)]
    skus = sorted({p.accelerator.upper() for p in points})
    sides = {sku: best_side(matching, sku, slo.slo) for sku in skus}
    rows = _chosen(sides, book, prices, asked)
    return Reading(
        asked=asked,
        scenario=scenario,
        slo=slo,
        price_set=book.price_set,
        tier_label=TIER_LABELS.get(asked.price_tier, asked.price_tier),
        tokens=tokens,
        rows=rows,
    )


def _chosen(
    sides: Mapping[str, Side], book: PriceBook, prices: Mapping[str, float], asked: EconAsk
) -> tuple[Chosen, ...]:
    chosen_points = [s.point for s in sides.values() if s.point is not None]
    bases = _other_bases(chosen_points)
    deployments = Deployment.objects.in_bulk([p.deployment_id for p in chosen_points])
    observed = dict(
        Point.objects.filter(pk__in=[p.point_id for p in chosen_points]).values_list(
            "pk", "prefix_cache_hit_rate"
        )
    )
    vendors = {a.sku.upper(): a.vendor for a in Accelerator.objects.filter(sku__in=list(sides))}
    kw = {sku.upper(): b.all_in_kw for sku, b in book.items()}
    rows = []
    for sku, side in sides.items():
        point = side.point
        if point is None:
            rows.append(Chosen(sku, vendors.get(sku, ""), side, reason=side.reason))
            continue
        rate, source = _cache_rate(asked.cache_hit_rate, observed.get(point.point_id))
        price = prices.get(sku)
        reason = "" if price is not None else f"no {asked.price_tier} price for {sku}"
        if not reason and kw.get(sku) is None:
            reason = f"no all-in power per GPU is known for {sku}"
        rows.append(
            Chosen(
                sku=sku,
                vendor=vendors.get(sku, ""),
                side=side,
                input_tok_s_per_gpu=bases.get((point.point_id, TokenKind.INPUT)),
                total_tok_s_per_gpu=bases.get((point.point_id, TokenKind.TOTAL)),
                usd_per_gpu_hour=price,
                price_source="your own price" if sku in asked.own_prices else "reference tier",
                all_in_kw=kw.get(sku),
                pools=pools_text(deployments[point.deployment_id]),
                cache_hit_rate=rate,
                cache_source=source,
                reason=reason,
            )
        )
    return tuple(rows)


def _cache_rate(asked: float | None, observed: float | None) -> tuple[float, str]:
    if asked is not None:
        return asked, "asked"
    if observed is not None:
        return observed, "measured (the run's observed prefix-cache hit rate)"
    return DEFAULT_CACHE_HIT_RATE, "assumed: the run reports none"


# --- margin and fleet ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Priced:
    """A chosen point's margin, and its fleet from the asked power budget (None, with the
    reason on the row, when it cannot be priced)."""

    row: Chosen
    margin: Margin | None
    fleet: Fleet | None
    why: str = ""


def priced(reading: Reading) -> list[Priced]:
    """Each accelerator's margin and fleet, most margin per MW-year first; those that cannot
    be priced (no point meets the SLO, no price, no power) last, with why."""
    asked = reading.asked
    out_tokens = reading.scenario.output_tokens
    found = []
    for row in reading.rows:
        point = row.point
        why = row.reason
        if point is None or why:
            found.append(Priced(row, None, None, why or row.side.reason))
            continue
        interactivity = point.interactivity_p50
        tok_out = row.output_tok_s_per_gpu or 0.0
        tok_in = row.input_tok_s_per_gpu
        if tok_in is None:
            found.append(Priced(row, None, None, "the point states no input throughput"))
            continue
        terms = Terms(asked.utilisation, asked.licence_share, row.cache_hit_rate)
        result = margin(
            tok_in,
            tok_out,
            prices=reading.tokens.prices,
            terms=terms,
            usd_per_gpu_hour=row.usd_per_gpu_hour or 0.0,
            all_in_kw_per_gpu=row.all_in_kw,
            pue=asked.pue,
        )
        planned = None
        if interactivity and row.all_in_kw:
            planned = fleet(
                asked.megawatts,
                all_in_kw_per_gpu=row.all_in_kw,
                gpus_per_node=asked.gpus_per_node or gpus_per_node(row.sku),
                input_tok_s_per_gpu=tok_in,
                output_tok_s_per_gpu=tok_out,
                interactivity=interactivity,
                output_tokens_per_request=out_tokens,
                margin_per_gpu_hour=result,
                utilisation=asked.utilisation,
                pue=asked.pue,
            )
        found.append(
            Priced(row, result, planned, "" if planned else "the point states no interactivity")
        )
    found.sort(
        key=lambda p: (
            p.margin is None,
            -(p.margin.margin_per_mw_year if p.margin else 0),
            p.row.sku,
        )
    )
    return found


# --- first-token limits ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CapRow:
    """Under one TTFT p99 cap: each accelerator's answer at that SLO, the cheapest per vendor."""

    cap_s: float
    slo: AskedSlo
    by_accelerator: tuple[Side, ...]  # cheapest first; sides with no point last
    by_vendor: tuple[tuple[str, Side | None], ...]  # (vendor, its cheapest side or None)

    @property
    def met(self) -> bool:
        return any(s.point is not None for s in self.by_accelerator)


@dataclass(frozen=True, slots=True)
class FirstToken:
    reading_slo: AskedSlo
    scenario: Scenario
    price_set: PriceSet
    tier_label: str
    floor: float | None
    caps: tuple[CapRow, ...]
    vendors: dict[str, str]


def first_token(
    asked: EconAsk,
    *,
    org: Organization | None,
    caps: Sequence[float] = FIRST_TOKEN_CAPS_S,
) -> FirstToken:
    """For each TTFT p99 cap, the asked tier with its TTFT bound set to the cap (its
    interactivity floor kept, or the asked one): each accelerator's answer at that SLO (its
    best measured point meeting it, no interpolation), priced; the cheapest per vendor."""
    book, prices = _gpu_hour_prices(asked, org)
    scenario = _scenario(asked.scenario, org)
    base = asked.slo.resolve(scenario)
    runs = answer_runs(org=org, model=asked.model, scenario=scenario)
    points = measured_points(runs, scenario=scenario, basis=TokenKind.OUTPUT, prices=prices)
    matching = [p for p in points if matches(p, asked.facts)]
    skus = sorted({p.accelerator.upper() for p in points})
    vendors = {a.sku.upper(): a.vendor for a in Accelerator.objects.filter(sku__in=skus)}
    floor_bound = next((b for b in base.slo.bounds if b.metric == Metric.INTERACTIVITY), None)
    rows = []
    for cap in caps:
        bounds = dict(asked.slo.bounds) | {"ttft_s_max": cap, "ttft_percentile": "p99"}
        slo = SloAsk(base.tier.name, bounds, asked.slo.min_success_rate).resolve(scenario)
        sides = [best_side(matching, sku, slo.slo) for sku in skus]
        sides.sort(key=lambda s: (s.usd_per_mtok is None, s.usd_per_mtok or 0.0, s.sku))
        by_vendor: dict[str, Side | None] = {}
        for side in sides:
            vendor = vendors.get(side.sku, "") or "unknown vendor"
            current = by_vendor.get(vendor)
            if side.usd_per_mtok is not None and (
                current is None or (current.usd_per_mtok or 0) > side.usd_per_mtok
            ):
                by_vendor[vendor] = side
            else:
                by_vendor.setdefault(vendor, None)
        rows.append(CapRow(cap, slo, tuple(sides), tuple(sorted(by_vendor.items()))))
    return FirstToken(
        reading_slo=base,
        scenario=scenario,
        price_set=book.price_set,
        tier_label=TIER_LABELS.get(asked.price_tier, asked.price_tier),
        floor=floor_bound.limit if floor_bound else None,
        caps=tuple(rows),
        vendors=vendors,
    )
