"""P(A is cheaper than B): the odds that A's $/Mtok is below B's at the asked SLO, beside the
answer's cost ratio, from what the data allows: each side's run-to-run spread and the spread
of prices.

The method (stated with every answer, `METHOD`), in `DRAWS` draws from a fixed seed:

1. Throughput: each side's tok/s/GPU at the answer's level is drawn as the ratio's interval
   draws it (workers/significance.py): the runs of the answer's configuration at that level,
   resampled with replacement, and within each drawn run its request records (in time blocks
   for closed loop) where they are stored; a run without records counts at its figure. A draw
   is the side's mean over its drawn runs.
2. Price: each draw takes one price scenario, all equally likely: every reference tier of
   every dated price set published up to the prices' date, A's and B's prices from the same
   set and tier (identical pairs once); or a range the user gives (uniform, A and B apart);
   a price the visitor gave as their own stays fixed.
3. The odds are the share of draws in which A's price over A's tok/s is below B's (ties
   count half), with its Monte Carlo standard error.

A side with one run and no request records has no spread to draw from: it is taken at its
figure, and said to be. When neither side has any spread the odds are not stated (a 0 or a 1
there would be a false certainty); what the prices alone do at the measured figures is said
instead. Why not a closed form: a bootstrap over runs and blocks of requests has none, and
drawing it is what the interval beside the ratio does already.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np

from apps.costs.answer import Answer
from apps.costs.formulas import CostInputError, Tier
from apps.costs.reference import PriceSet, price_set, price_sets, reference_book
from workers import significance

DRAWS = 4000
SEED = significance.SEED  # fixed: the same runs and prices give the same odds everywhere

METHOD = (
    "share of draws in which A's $/Mtok is below B's (ties count half): each side's tok/s/GPU "
    "resampled over the runs of its configuration at the answer's level and the request "
    "records within each (workers/significance.py's bootstrap; a run without records at its "
    "figure), each draw priced by one price scenario, all equally likely"
)
LEAVES_OUT = (
    "configurations other than each side's answer: the odds are of these two configurations "
    "at their levels, not of the accelerators in general",
    "the pick of the best point among many: the chosen level's runs are resampled, the choice "
    "of that level is not",
    "the SLO itself: a resampled run is not judged against it again",
    "costs outside the $/GPU-hr of a price scenario (power and hosting beyond a tier, discounts)",
    "what still differs between the sides (listed beside the ratio) and accuracy",
)


@dataclass(frozen=True, slots=True)
class PriceScenario:
    """One way the two sides may be priced: A's and B's $/GPU-hr, and where they come from."""

    label: str
    usd_a: float
    usd_b: float


@dataclass(frozen=True, slots=True)
class PriceRange:
    """A range of $/GPU-hr for each side, given by the user: drawn uniformly, A and B apart."""

    a: tuple[float, float]
    b: tuple[float, float]

    def describe(self) -> str:
        def span(low: float, high: float) -> str:
            return f"${low:g}" if low == high else f"${low:g}–${high:g}"

        return f"A {span(*self.a)}, B {span(*self.b)} per GPU-hr, drawn uniformly"


Prices = Sequence[PriceScenario] | PriceRange


@dataclass(frozen=True, slots=True)
class Odds:
    """P(A's $/Mtok < B's), or (probability None) why it is not stated."""

    probability: float | None
    standard_error: float | None
    draws: int
    runs_a: int
    runs_b: int
    requests_a: int
    requests_b: int
    prices: str  # what the price draw was
    method: str = METHOD
    leaves_out: tuple[str, ...] = LEAVES_OUT
    notes: tuple[str, ...] = ()

    def sentence(self, a: str = "A", b: str = "B") -> str:
        """'P(MI355X is cheaper than B200) = 0.73 (±0.007), over 9 and 1 run(s) ...'."""
        sources = f"{self.runs_a} and {self.runs_b} run(s) at the answer's levels"
        if self.requests_a or self.requests_b:
            sources += f", {self.requests_a} and {self.requests_b} request records"
        if self.probability is None:
            return f"P({a} is cheaper than {b}): not stated ({'; '.join(self.notes)})"
        return (
            f"P({a} is cheaper than {b}) = {self.probability:.2f} "
            f"(±{self.standard_error:.3f} Monte Carlo), over {sources}; prices: {self.prices}"
        )


# A price or a range of two, in decimal notation ('1.50', '1.40-1.60', '1.40–1.60'): what
# parse_range reads and the API's schema states.
PRICE_RANGE_PATTERN = r"^\s*\d+(?:\.\d*)?\s*(?:[-–]\s*\d+(?:\.\d*)?\s*)?$"


def parse_range(field: str, text: str) -> tuple[float, float]:
    """'1.40-1.60' (or one price) as (low, high) $/GPU-hr; anything else is refused."""
    if not re.fullmatch(PRICE_RANGE_PATTERN, text):
        raise CostInputError(field, f"{text[:40]!r} is not a price or a range like 1.40-1.60")
    parts = text.replace("–", "-").split("-")
    try:
        values = [float(part) for part in parts if part.strip()]
    except ValueError:
        values = []
    if len(values) not in (1, 2) or not all(math.isfinite(v) and v >= 0 for v in values):
        raise CostInputError(field, f"{text[:40]!r} is not a price or a range like 1.40-1.60")
    low, high = min(values), max(values)
    return low, high


def price_scenarios(
    sku_a: str,
    sku_b: str,
    *,
    as_of: PriceSet,
    sets: Sequence[PriceSet],
    own: Mapping[str, float] | None = None,
) -> list[PriceScenario]:
    """Every reference tier both sides have, under each set published up to `as_of` (each
    set's book as it stood then), newest first, identical price pairs once; a side with an
    `own` price (by SKU) keeps it in every scenario."""
    fixed = {sku.upper(): price for sku, price in (own or {}).items()}
    a, b = sku_a.upper(), sku_b.upper()
    seen: set[tuple[float, float]] = set()
    out = []
    for each in reversed([s for s in sets if s.in_force_from <= as_of.in_force_from]):
        book = reference_book(each.name, sets).prices
        if a not in book or b not in book:
            continue
        both = set(book[a].usd_per_gpu_hour) & set(book[b].usd_per_gpu_hour)
        for tier in sorted(both):
            pair = (
                fixed.get(a, book[a].usd_per_gpu_hour[tier]),
                fixed.get(b, book[b].usd_per_gpu_hour[tier]),
            )
            if pair not in seen:
                seen.add(pair)
                # Named by the set that stated the price (a correction may state none).
                stated_by = book[a].citations[tier].split(":")[0]
                out.append(PriceScenario(f"{stated_by} {tier}", *pair))
    return out


def _price_draws(prices: Prices, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(prices, PriceRange):
        return rng.uniform(*prices.a, n), rng.uniform(*prices.b, n)
    pick = rng.integers(0, len(prices), n)
    usd_a = np.array([p.usd_a for p in prices])
    usd_b = np.array([p.usd_b for p in prices])
    return usd_a[pick], usd_b[pick]


def _describe(prices: Prices) -> str:
    if isinstance(prices, PriceRange):
        return prices.describe()
    shown = "; ".join(f"{p.label} (A ${p.usd_a:.4g}, B ${p.usd_b:.4g})" for p in prices)
    return f"{len(prices)} scenario(s), equally likely: {shown}"


def _spread(runs: Sequence[significance.Run]) -> bool:
    return len(runs) > 1 or any(isinstance(r, significance.Sample) for r in runs)


def cheaper_odds(
    runs_a: Sequence[significance.Run],
    runs_b: Sequence[significance.Run],
    prices: Prices,
    *,
    basis: str,
    draws: int = DRAWS,
    seed: int = SEED,
) -> Odds:
    """P(A's $/Mtok < B's) for two sides' runs at their levels (each a `Sample` of request
    records, or its tok/s/GPU figure) under `prices` (scenarios, or a user's range), on the
    token `basis` ("output", "input", "total")."""
    if not runs_a or not runs_b:
        raise ValueError("each side needs at least one run")
    if not isinstance(prices, PriceRange) and not prices:
        raise ValueError("no price scenario prices both sides")
    metric = f"{basis}_tok_s_gpu"
    requests = [
        sum(r.size for r in runs if isinstance(r, significance.Sample)) for runs in (runs_a, runs_b)
    ]
    odds = partial(
        Odds,
        runs_a=len(runs_a),
        runs_b=len(runs_b),
        requests_a=requests[0],
        requests_b=requests[1],
        prices=_describe(prices),
    )
    if not _spread(runs_a) and not _spread(runs_b):
        return odds(None, None, 0, notes=(_figures_only(runs_a, runs_b, prices),))
    notes = [
        f"{side}: one run without request records, taken at its figure (its run-to-run spread "
        "is not in the odds)"
        for side, runs in (("A", runs_a), ("B", runs_b))
        if not _spread(runs)
    ]
    rng = np.random.default_rng(seed)
    tok_a = significance.side_replicates(metric, runs_a, rng=rng, replicates=draws)
    tok_b = significance.side_replicates(metric, runs_b, rng=rng, replicates=draws)
    usd_a, usd_b = _price_draws(prices, rng, draws)
    with np.errstate(divide="ignore", invalid="ignore"):
        cost_a, cost_b = usd_a / tok_a, usd_b / tok_b
    usable = np.isfinite(cost_a) & np.isfinite(cost_b)
    if usable.sum() < draws // 2:
        return odds(None, None, 0, notes=("too few draws with a figure",))
    cheaper = (cost_a[usable] < cost_b[usable]) + 0.5 * (cost_a[usable] == cost_b[usable])
    p = float(cheaper.mean())
    n = int(usable.sum())
    return odds(p, math.sqrt(max(p * (1 - p), 0.0) / n), n, notes=tuple(notes))


def _figures_only(
    runs_a: Sequence[significance.Run], runs_b: Sequence[significance.Run], prices: Prices
) -> str:
    """What the prices alone do at the measured figures, when neither side has a spread."""
    head = "one measurement per side: no run-to-run spread to judge by, so no probability"
    tok_a, tok_b = runs_a[0], runs_b[0]
    if isinstance(tok_a, significance.Sample) or isinstance(tok_b, significance.Sample):
        return head
    if tok_a <= 0 or tok_b <= 0:
        return head
    if isinstance(prices, PriceRange):
        return f"{head}; prices range over {prices.describe()}"
    cheaper = sum(p.usd_a / tok_a < p.usd_b / tok_b for p in prices)
    return (
        f"{head}; at the measured figures A is cheaper under {cheaper} of {len(prices)} "
        "price scenarios"
    )


# --- beside the answer (apps/costs/answer_selectors.ask) -----------------------------------


def answer_prices(
    result: Answer,
    *,
    tier: str,
    own: Mapping[str, float],
    ranges: tuple[tuple[float, float] | None, tuple[float, float] | None] = (None, None),
    prices_as_of: str = "",
) -> Prices | None:
    """The price draw beside an answer: the user's range where given (a side without one at
    its answer's price), else every reference scenario up to the prices' date, with the
    visitor's own prices (and an organization's own tier) fixed; None without two prices."""
    a, b = result.a.point, result.b.point
    if a is None or b is None or not a.usd_per_gpu_hour or not b.usd_per_gpu_hour:
        return None
    if ranges[0] is not None or ranges[1] is not None:
        fixed_a, fixed_b = (a.usd_per_gpu_hour,) * 2, (b.usd_per_gpu_hour,) * 2
        return PriceRange(ranges[0] or fixed_a, ranges[1] or fixed_b)
    fixed = {sku.upper(): price for sku, price in own.items()}
    if tier not in {t.value for t in Tier}:  # an organization's own tier: its prices stand
        fixed |= {
            a.accelerator.upper(): a.usd_per_gpu_hour,
            b.accelerator.upper(): b.usd_per_gpu_hour,
        }
    sets = price_sets()
    scenarios = price_scenarios(
        a.accelerator, b.accelerator, as_of=price_set(prices_as_of, sets), sets=sets, own=fixed
    )
    return scenarios or [
        PriceScenario("the answer's prices", a.usd_per_gpu_hour, b.usd_per_gpu_hour)
    ]


def answer_odds(
    result: Answer,
    records: Mapping[int, significance.Sample],
    prices: Prices | None,
    *,
    basis: str,
) -> Odds | None:
    """The odds beside an answer's $/Mtok ratio (None where it has no ratio), from the runs at
    each side's level (`Side.level_runs`) and their request records by point id."""
    a, b = result.a, result.b
    if result.usd_ratio is None or prices is None or a.point is None or b.point is None:
        return None
    if "interpolated" in (a.reading, b.reading):
        return Odds(
            None,
            None,
            0,
            1,
            1,
            0,
            0,
            _describe(prices),
            notes=("an interpolated reading has no runs to resample",),
        )
    runs = [
        [records.get(p.point_id, p.tok_s_per_gpu or 0.0) for p in side.level_runs]
        for side in (a, b)
    ]
    return cheaper_odds(runs[0], runs[1], prices, basis=basis)
