"""Claim checks: does "A at 80% of B's throughput, $1.48 vs $1.95 per GPU-hour" make
"under half the cost"? And which assumptions would make it so?

Cost ratio A:B = (price A / price B) / (throughput A / throughput B), i.e. the ratio of
their $/Mtok at the same kind of tokens. Pure functions, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from apps.costs.answer import Answer
from apps.costs.formulas import (
    AcceleratorPrices,
    CostInputError,
    Tier,
    TierPrice,
    finite_result,
    require_non_negative,
    require_positive,
    tier_usd_per_gpu_hour,
    usd_per_mtok,
)
from apps.costs.procurement import DeploymentCurve
from apps.costs.procurement_inputs import FieldError
from apps.costs.reference import TIER_LABELS
from apps.costs.slo import Slo, SloResult, best_throughput_at_slo

# "about x" holds within this relative distance of the claimed ratio.
ABOUT_TOLERANCE = 0.05


class Comparison(StrEnum):
    BELOW = "<"
    AT_MOST = "<="
    ABOUT = "~"


@dataclass(frozen=True, slots=True)
class Claim:
    """A published statement: A's throughput relative to B's, their prices, the cost claim."""

    throughput_ratio: float
    usd_per_gpu_hour_a: float
    usd_per_gpu_hour_b: float
    claimed_cost_ratio: float
    comparison: Comparison = Comparison.BELOW
    label_a: str = "A"
    label_b: str = "B"


@dataclass(frozen=True, slots=True)
class Assumption:
    """One way to read the claim: a throughput ratio and a pair of prices, with where
    they come from (a price tier pair, a stored run pairing, a different scenario ...)."""

    label: str
    kind: str
    throughput_ratio: float
    usd_per_gpu_hour_a: float
    usd_per_gpu_hour_b: float
    differences: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Verdict:
    assumption: Assumption
    cost_ratio: float
    holds: bool


@dataclass(frozen=True, slots=True)
class ClaimCheck:
    claim: Claim
    cost_ratio: float
    holds: bool
    # What it would take at the stated figures, the other figures kept as stated.
    throughput_ratio_needed: float
    usd_per_gpu_hour_a_needed: float
    verdicts: tuple[Verdict, ...]

    @property
    def assumptions_that_hold(self) -> tuple[Verdict, ...]:
        return tuple(verdict for verdict in self.verdicts if verdict.holds)

    def summary(self) -> str:
        claim = self.claim
        said = f"{claim.comparison.value} {claim.claimed_cost_ratio:g}"
        verdict = "holds" if self.holds else "does not hold"
        return (
            f"({claim.usd_per_gpu_hour_a:g}/{claim.usd_per_gpu_hour_b:g})"
            f"/{claim.throughput_ratio:g} = {self.cost_ratio:.2f}: the claim {said} {verdict}"
        )


def cost_ratio(
    throughput_ratio: float, usd_per_gpu_hour_a: float, usd_per_gpu_hour_b: float
) -> float:
    """$/Mtok of A over $/Mtok of B."""
    ratio = require_positive("throughput_ratio", throughput_ratio)
    price_a = require_non_negative("usd_per_gpu_hour_a", usd_per_gpu_hour_a)
    price_b = require_positive("usd_per_gpu_hour_b", usd_per_gpu_hour_b)
    return finite_result("throughput_ratio", (price_a / price_b) / ratio)


def holds(value: float, claimed: float, comparison: Comparison) -> bool:
    """Whether a figure makes a claim: below, at most, or about (within ABOUT_TOLERANCE) it.
    The one verdict the checker, the ledger (apps/claims) and the story give."""
    if comparison is Comparison.BELOW:
        return value < claimed
    if comparison is Comparison.AT_MOST:
        return value <= claimed
    return abs(value - claimed) <= ABOUT_TOLERANCE * claimed


def check_claim(claim: Claim, assumptions: Iterable[Assumption] = ()) -> ClaimCheck:
    """The computed cost ratio, whether the claim holds, and under which assumptions."""
    claimed = require_positive("claimed_cost_ratio", claim.claimed_cost_ratio)
    try:
        comparison = Comparison(claim.comparison)
    except ValueError:
        raise CostInputError("comparison", "must be one of <, <=, ~") from None
    computed = cost_ratio(
        claim.throughput_ratio, claim.usd_per_gpu_hour_a, claim.usd_per_gpu_hour_b
    )
    price_ratio = claim.usd_per_gpu_hour_a / claim.usd_per_gpu_hour_b
    verdicts = []
    for index, assumption in enumerate(assumptions):
        try:
            ratio = cost_ratio(
                assumption.throughput_ratio,
                assumption.usd_per_gpu_hour_a,
                assumption.usd_per_gpu_hour_b,
            )
        except CostInputError as error:
            raise CostInputError(f"assumptions[{index}].{error.field}", error.message) from None
        verdicts.append(Verdict(assumption, ratio, holds(ratio, claimed, comparison)))
    return ClaimCheck(
        claim=claim,
        cost_ratio=computed,
        holds=holds(computed, claimed, comparison),
        # cost = price_ratio / throughput_ratio, solved for each at cost == claimed.
        throughput_ratio_needed=finite_result("claimed_cost_ratio", price_ratio / claimed),
        usd_per_gpu_hour_a_needed=finite_result(
            "claimed_cost_ratio", claimed * claim.throughput_ratio * claim.usd_per_gpu_hour_b
        ),
        verdicts=tuple(verdicts),
    )


def tier_pair_assumptions(
    prices: Mapping[str, AcceleratorPrices],
    accelerator_a: str,
    accelerator_b: str,
    throughput_ratio: float,
) -> list[Assumption]:
    """Every pairing of A's and B's price tiers at one throughput ratio."""
    book = dict(prices)
    return [
        Assumption(
            label=(
                f"{accelerator_a} {TIER_LABELS[tier_a.value]} vs "
                f"{accelerator_b} {TIER_LABELS[tier_b.value]}"
            ),
            kind="price tier",
            throughput_ratio=throughput_ratio,
            usd_per_gpu_hour_a=tier_usd_per_gpu_hour(book, accelerator_a, tier_a),
            usd_per_gpu_hour_b=tier_usd_per_gpu_hour(book, accelerator_b, tier_b),
        )
        for tier_a in Tier
        for tier_b in Tier
    ]


@dataclass(frozen=True, slots=True)
class Difference:
    field: str
    a: object
    b: object


def what_differs(
    a: Mapping[str, object], b: Mapping[str, object], fields: Sequence[str] | None = None
) -> list[Difference]:
    """The fields (quantization, engine, scenario, provenance, price ...) where A and B
    differ, in the order given, so a ratio never appears without them."""
    names = list(fields) if fields is not None else list(dict.fromkeys([*a, *b]))
    return [
        Difference(name, a.get(name), b.get(name)) for name in names if a.get(name) != b.get(name)
    ]


_CURVE_FIELDS = (
    "accelerator",
    "gpus",
    "engine",
    "quantization",
    "parallelism",
    "scenario",
    "provenance",
    "token_kind",
)


def answer_assumptions(
    answers: Sequence[Answer], usd_per_gpu_hour_a: float, usd_per_gpu_hour_b: float
) -> list[Assumption]:
    """Throughput ratios from stored runs, as the one answer (apps/costs/answer.py) gives
    them at the claim's SLO: each side's best measured point meeting it among the asked
    facts, with every fact that still differs. An answer where a side has no point meeting
    the SLO gives no assumption (the page says why)."""
    assumptions = []
    seen = set()
    for result in answers:
        a, b = result.a, result.b
        if a.point is None or b.point is None or not result.tok_ratio:
            continue
        pair = (a.point.point_id, a.point.run_id, b.point.point_id, b.point.run_id)
        if pair in seen:  # a wider question that found the same two points
            continue
        seen.add(pair)
        assumptions.append(
            Assumption(
                label=f"run {a.point.run_id} {a.point.level} vs run {b.point.run_id} "
                f"{b.point.level} ({result.facts.describe()})",
                kind="stored runs (the answer at the SLO"
                + (", interpolated" if "interpolated" in (a.reading, b.reading) else "")
                + ")",
                throughput_ratio=result.tok_ratio,
                usd_per_gpu_hour_a=usd_per_gpu_hour_a,
                usd_per_gpu_hour_b=usd_per_gpu_hour_b,
                differences=result.differs,
            )
        )
    return assumptions


@dataclass(frozen=True, slots=True)
class ClaimPage:
    """Everything the claim page shows, computed from its query string."""

    values: dict[str, str]
    errors: tuple[FieldError, ...]
    check: ClaimCheck | None = None
    price_a: TierPrice | None = None
    price_b: TierPrice | None = None
    slo: Slo | None = None
    # The stored runs' answers the check tried, and why a question got none.
    answers: tuple[Answer, ...] = ()
    stored_notes: tuple[str, ...] = ()


def check_with_assumptions(
    claim: Claim,
    accelerators: tuple[str, str],
    prices: Mapping[str, AcceleratorPrices],
    answers: Sequence[Answer] = (),
) -> ClaimCheck:
    """The claim checked, and tried under every pairing of A's and B's price tiers (when the
    book prices both) and under the stored runs' answers at the claim's SLO."""
    sku_a, sku_b = (sku.upper() for sku in accelerators)
    assumptions: list[Assumption] = []
    books = {sku.upper() for sku in prices}
    if sku_a in books and sku_b in books:
        assumptions += tier_pair_assumptions(prices, sku_a, sku_b, claim.throughput_ratio)
    assumptions += answer_assumptions(answers, claim.usd_per_gpu_hour_a, claim.usd_per_gpu_hour_b)
    return check_claim(claim, assumptions)


@dataclass(frozen=True, slots=True)
class SideCost:
    curve: DeploymentCurve
    price: TierPrice
    result: SloResult
    usd_per_mtok: float | None


@dataclass(frozen=True, slots=True)
class RunComparison:
    """A vs B: each side's cost at the SLO, the ratio, and everything that differs."""

    a: SideCost
    b: SideCost
    cost_ratio: float | None  # $/Mtok A / $/Mtok B; None when either side misses the SLO
    throughput_ratio: float | None
    differences: tuple[Difference, ...]
    reason: str


def compare_runs(
    a: DeploymentCurve, price_a: TierPrice, b: DeploymentCurve, price_b: TierPrice, slo: Slo
) -> RunComparison:
    """Cost of A relative to B at the same SLO, with what differs listed beside the ratio."""
    sides = []
    for curve, price in ((a, price_a), (b, price_b)):
        result = best_throughput_at_slo(curve.points, slo)
        cost = (
            usd_per_mtok(price.usd_per_gpu_hour, result.tok_per_s_per_gpu)
            if result.tok_per_s_per_gpu is not None
            else None
        )
        sides.append(SideCost(curve, price, result, cost))
    side_a, side_b = sides
    differences = what_differs(
        {name: getattr(a, name) for name in _CURVE_FIELDS}
        | {"price": f"{price_a.tier} ${price_a.usd_per_gpu_hour:g}/GPU-hr ({price_a.source})"},
        {name: getattr(b, name) for name in _CURVE_FIELDS}
        | {"price": f"{price_b.tier} ${price_b.usd_per_gpu_hour:g}/GPU-hr ({price_b.source})"},
    )
    for side in (side_a, side_b):
        if side.result.provenance == "interpolated":
            differences.append(
                Difference(f"run {side.curve.run_id} throughput", "interpolated", "")
            )
    if side_a.usd_per_mtok is None or side_b.usd_per_mtok is None:
        missing = side_a if side_a.usd_per_mtok is None else side_b
        return RunComparison(
            side_a,
            side_b,
            None,
            None,
            tuple(differences),
            f"run {missing.curve.run_id}: {missing.result.reason}",
        )
    tput_a, tput_b = side_a.result.tok_per_s_per_gpu, side_b.result.tok_per_s_per_gpu
    # Both sides have a cost, so both have a throughput at the SLO.
    throughput_ratio: float | None = (tput_a or 0.0) / (tput_b or 1.0)
    ratio = side_a.usd_per_mtok / side_b.usd_per_mtok if side_b.usd_per_mtok > 0 else None
    reason = "" if ratio is not None else "B costs nothing per token: no ratio"
    if not math.isfinite(throughput_ratio or 0.0) or not math.isfinite(ratio or 0.0):
        throughput_ratio, ratio, reason = None, None, "the ratio is out of range"
    return RunComparison(side_a, side_b, ratio, throughput_ratio, tuple(differences), reason)
