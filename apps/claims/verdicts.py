"""A published claim re-priced: its verdict under the price set of its own date, under the
newest, under each tier, at each set since, and the date it stopped holding. Pure.

Every verdict is the claim checker's (apps/costs/claims.py `check_claim`): A's $/Mtok over
B's = (price A / price B) / (A's tok/s over B's), held against the claimed ratio by its
comparison. A throughput claim names no price, so no price set moves it: only stored runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from apps.costs.claims import Claim, Comparison, check_claim
from apps.costs.reference import PriceSet, reference_book

COST = "cost"
THROUGHPUT = "throughput"


@dataclass(frozen=True, slots=True)
class LedgerClaim:
    """What a verdict needs of a published claim (apps/claims/models.PublishedClaim)."""

    slug: str
    kind: str  # COST or THROUGHPUT
    a: str
    b: str
    published_on: date
    throughput_ratio: float  # A's tok/s/GPU over B's, as the figures give it
    claimed_ratio: float  # A's $/Mtok over B's (a cost claim), or A's tok/s over B's
    comparison: Comparison
    basis_tier: str | None  # the tier its prices are (or are taken to be) of

    def describe(self) -> str:
        """'MI355X's $/Mtok ~ 0.709 of B200's', as a verdict table heads it."""
        what = "$/Mtok" if self.kind == COST else "tok/s/GPU"
        return f"{self.a}'s {what} {self.comparison.value} {self.claimed_ratio:g}× {self.b}'s"


@dataclass(frozen=True, slots=True)
class PricedVerdict:
    """The claim's own throughput ratio priced by one set and tier."""

    price_set: str
    in_force_from: date
    tier: str
    usd_a: float
    usd_b: float
    cost_ratio: float  # A's $/Mtok over B's
    holds: bool


@dataclass(frozen=True, slots=True)
class Reckoning:
    """A claim under the dated price sets; all empty for a throughput claim."""

    then: PricedVerdict | None  # the set in force on its date, at its basis tier
    now: PricedVerdict | None  # the newest set, at its basis tier
    tiers_then: tuple[PricedVerdict, ...]
    tiers_now: tuple[PricedVerdict, ...]
    timeline: tuple[PricedVerdict, ...]  # its basis tier, its date's set and every later one
    stopped_holding_on: date | None  # the set that ended it, where it held and no longer does

    @property
    def never_held(self) -> bool:
        return bool(self.timeline) and not any(v.holds for v in self.timeline)


def priced(
    claim: LedgerClaim, chosen: PriceSet, tier: str, sets: Sequence[PriceSet]
) -> PricedVerdict | None:
    """The claim under one set and tier (None where the set prices either side at no such
    tier), by the claim checker's one rule."""
    book = reference_book(chosen.name, sets).prices
    a, b = book.get(claim.a.upper()), book.get(claim.b.upper())
    if a is None or b is None or tier not in a.usd_per_gpu_hour or tier not in b.usd_per_gpu_hour:
        return None
    usd_a, usd_b = a.usd_per_gpu_hour[tier], b.usd_per_gpu_hour[tier]
    check = check_claim(
        Claim(
            throughput_ratio=claim.throughput_ratio,
            usd_per_gpu_hour_a=usd_a,
            usd_per_gpu_hour_b=usd_b,
            claimed_cost_ratio=claim.claimed_ratio,
            comparison=claim.comparison,
            label_a=claim.a,
            label_b=claim.b,
        )
    )
    return PricedVerdict(
        chosen.name, chosen.in_force_from, tier, usd_a, usd_b, check.cost_ratio, check.holds
    )


def _tiers(
    claim: LedgerClaim, chosen: PriceSet, sets: Sequence[PriceSet]
) -> tuple[PricedVerdict, ...]:
    entry = reference_book(chosen.name, sets).prices.get(claim.a.upper())
    found = (
        priced(claim, chosen, tier, sets)
        for tier in sorted(entry.usd_per_gpu_hour if entry else ())
    )
    return tuple(v for v in found if v is not None)


def reckon(claim: LedgerClaim, sets: Sequence[PriceSet]) -> Reckoning:
    """The claim under the set of its date, the newest, each tier of both, and every set
    since its date at its basis tier, with the date it stopped holding."""
    if claim.kind != COST or claim.basis_tier is None:
        return Reckoning(None, None, (), (), (), None)
    # The set in force on its date; for a claim older than every set, the first.
    first = next((s for s in reversed(sets) if s.in_force_from <= claim.published_on), sets[0])
    later = [s for s in sets if s.in_force_from > first.in_force_from]
    timeline = tuple(
        v for v in (priced(claim, s, claim.basis_tier, sets) for s in [first, *later]) if v
    )
    newest = sets[-1]
    return Reckoning(
        then=timeline[0] if timeline else None,
        now=priced(claim, newest, claim.basis_tier, sets),
        tiers_then=_tiers(claim, first, sets),
        tiers_now=_tiers(claim, newest, sets),
        timeline=timeline,
        stopped_holding_on=stopped_holding(timeline),
    )


def stopped_holding(timeline: Sequence[PricedVerdict]) -> date | None:
    """The date of the set from which the claim has not held, where it held before it; None
    while it holds, and where it never held."""
    if not timeline or timeline[-1].holds:
        return None
    ended = None
    for earlier, later in zip(timeline, timeline[1:], strict=False):
        if earlier.holds and not later.holds:
            ended = later.in_force_from
    return ended
