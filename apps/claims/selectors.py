"""Reads for the claims ledger: each published claim with its verdicts under the dated price
sets (apps/claims/verdicts.py), the stored runs that bear on it through the one answer
(apps/costs/answer_selectors.ask, never a rule of its own), its standing and its flips.

`prices_as_of` (a date or a set's name) reads the ledger as it stood then: the sets published
after it are left out, so "now" is the set in force on that date.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from apps.accounts.models import Organization
from apps.claims.models import ClaimFlip, ClaimStanding, PublishedClaim
from apps.claims.verdicts import COST, LedgerClaim, Reckoning, reckon
from apps.costs.answer import Facts
from apps.costs.answer_selectors import DEFAULT_TIER, Asked, Asking, ask
from apps.costs.claims import Claim, Comparison, Verdict, answer_assumptions, check_claim, holds
from apps.costs.formulas import CostInputError, TokenKind
from apps.costs.reference import PriceSet, price_set, price_sets


def ledger_claim(claim: PublishedClaim) -> LedgerClaim:
    return LedgerClaim(
        slug=claim.slug,
        kind=claim.kind,
        a=claim.side_a,
        b=claim.side_b,
        published_on=claim.published_on,
        throughput_ratio=claim.throughput_ratio,
        claimed_ratio=claim.claimed_ratio,
        comparison=Comparison(claim.comparison),
        basis_tier=(claim.basis or {}).get("tier"),
    )


def sets_as_of(prices_as_of: str = "") -> tuple[PriceSet, ...]:
    """The shipped sets published by `prices_as_of` (all of them when empty); a value that
    names no set is a CostInputError naming prices_as_of."""
    chosen = price_set(prices_as_of)
    return tuple(s for s in price_sets() if s.in_force_from <= chosen.in_force_from)


def question(claim: PublishedClaim, *, prices_as_of: str = "") -> Asked:
    """The claim's workload as the one answer's question: its model, scenario, the facts
    both sides share, its interactivity floor, priced at its basis tier."""
    work = claim.workload or {}
    floor = work.get("interactivity_min")
    return Asked(
        model=work.get("model", ""),
        scenario=work.get("scenario", ""),
        a=claim.side_a.upper(),
        b=claim.side_b.upper(),
        facts=Facts(
            work.get("precision", "any"),
            work.get("spec", "any"),
            work.get("engine", "any"),
            work.get("serving", "any"),
        ),
        bounds={"interactivity_min": floor, "interactivity_percentile": "p50"},
        basis=TokenKind(work.get("token_basis", "output")),
        tier=(claim.basis or {}).get("tier") or DEFAULT_TIER,
        prices_as_of=prices_as_of,
    )


@dataclass(frozen=True, slots=True)
class RunsEvidence:
    """What the stored runs say of a claim through the one answer, or why nothing."""

    asking: Asking | None
    holds: bool | None  # None: no stored run bears on it
    ratio: float | None  # A over B of what it claims ($/Mtok, or tok/s/GPU)
    runs: tuple[int | None, int | None]
    reason: str
    verdict: Verdict | None = None  # the claim checker's verdict on the stored runs


def runs_evidence(
    claim: PublishedClaim, *, org: Organization | None, prices_as_of: str = ""
) -> RunsEvidence:
    """The stored runs that bear on the claim, as the one answer pairs them at its workload,
    and whether they make it (cost claims priced at its basis tier in the set asked)."""
    try:
        asking = ask(question(claim, prices_as_of=prices_as_of), org=org, with_swing=False)
    except CostInputError as exc:
        return RunsEvidence(None, None, None, (None, None), f"{exc.field}: {exc.message}")
    result = asking.answer
    a, b = result.a, result.b
    runs = (a.point.run_id if a.point else None, b.point.run_id if b.point else None)
    if result.tok_ratio is None or a.point is None or b.point is None:
        why = "; ".join(side.reason for side in (a, b) if side.point is None)
        return RunsEvidence(asking, None, None, runs, why or "no ratio")
    mine = ledger_claim(claim)
    if mine.kind != COST:
        made = holds(result.tok_ratio, claim.claimed_ratio, mine.comparison)
        return RunsEvidence(asking, made, result.tok_ratio, runs, "")
    usd_a, usd_b = a.point.usd_per_gpu_hour, b.point.usd_per_gpu_hour
    if not usd_a or not usd_b:
        return RunsEvidence(asking, None, None, runs, "a side has no price at the basis tier")
    # The checker's own verdict on the answer's pairing (apps/costs/claims.py).
    check = check_claim(
        Claim(
            claim.throughput_ratio,
            usd_a,
            usd_b,
            claim.claimed_ratio,
            mine.comparison,
            claim.side_a,
            claim.side_b,
        ),
        answer_assumptions([result], usd_a, usd_b),
    )
    (verdict,) = check.verdicts
    return RunsEvidence(asking, verdict.holds, verdict.cost_ratio, runs, "", verdict)


@dataclass(frozen=True, slots=True)
class LedgerEntry:
    claim: PublishedClaim
    reckoning: Reckoning
    runs: RunsEvidence
    standing: ClaimStanding | None
    flips: tuple[ClaimFlip, ...]
    price_set: PriceSet  # "now": the newest set of those read

    @property
    def describe(self) -> str:
        return ledger_claim(self.claim).describe()


def ledger_entries(
    *,
    org: Organization | None = None,
    prices_as_of: str = "",
    claims: Sequence[PublishedClaim] | None = None,
    sets: Sequence[PriceSet] | None = None,
) -> list[LedgerEntry]:
    """Every claim (or `claims`) with its verdicts under `sets` (the shipped ones published by
    `prices_as_of`), its stored-run evidence (priced by the one price book at `prices_as_of`),
    standing and flips."""
    known = tuple(sets) if sets is not None else sets_as_of(prices_as_of)
    rows = (
        list(claims)
        if claims is not None
        else list(PublishedClaim.objects.select_related("standing").prefetch_related("flips"))
    )
    return [
        LedgerEntry(
            claim=claim,
            reckoning=reckon(ledger_claim(claim), known),
            runs=runs_evidence(claim, org=org, prices_as_of=prices_as_of),
            standing=getattr(claim, "standing", None),
            flips=tuple(claim.flips.all()),
            price_set=known[-1],
        )
        for claim in rows
    ]


def ledger_claim_row(slug: str) -> PublishedClaim | None:
    """A stored claim of the ledger by slug (`loadreference` stores the shipped ones)."""
    return PublishedClaim.objects.filter(slug=slug).first()


def ledger_entry(
    slug: str, *, org: Organization | None = None, prices_as_of: str = ""
) -> LedgerEntry | None:
    claim = PublishedClaim.objects.filter(slug=slug).first()
    if claim is None:
        return None
    (entry,) = ledger_entries(org=org, prices_as_of=prices_as_of, claims=[claim])
    return entry
