"""GET /api/v1/claims and /claims/{slug}: the claims ledger, each claim with its source,
basis, verdicts then and now and under each tier, the stored runs that bear on it, the date
it stopped holding and its flips."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Field, Query, Router, Schema, Status

from apps.accounts.auth import optional_org
from apps.api_errors import Errors, error_body
from apps.claims.selectors import LedgerEntry, ledger_entries, ledger_entry
from apps.claims.verdicts import PricedVerdict
from apps.costs.api.answer import odds_out

router = Router(tags=["claims"])


class LedgerQuery(Schema):
    prices_as_of: str = Field(
        "",
        description="read the ledger as of a date (YYYY-MM-DD) or a price set's name: later "
        "sets are left out, so 'now' is the set in force then",
    )


def verdict_out(verdict: PricedVerdict | None) -> dict[str, Any] | None:
    if verdict is None:
        return None
    return {
        "price_set": verdict.price_set,
        "in_force_from": verdict.in_force_from.isoformat(),
        "tier": verdict.tier,
        "usd_per_gpu_hour_a": verdict.usd_a,
        "usd_per_gpu_hour_b": verdict.usd_b,
        "cost_ratio": verdict.cost_ratio,
        "holds": verdict.holds,
    }


def entry_out(entry: LedgerEntry) -> dict[str, Any]:
    claim, reckoning, runs = entry.claim, entry.reckoning, entry.runs
    asking = runs.asking
    return {
        "slug": claim.slug,
        "title": claim.title,
        "statement": claim.statement,
        "published_on": claim.published_on.isoformat(),
        "source": claim.source,
        "kind": claim.kind,
        "a": claim.side_a,
        "b": claim.side_b,
        "claim": entry.describe,
        "workload": claim.workload,
        "figures": claim.figures,
        "basis": claim.basis,
        "throughput_ratio": claim.throughput_ratio,
        "claimed_ratio": claim.claimed_ratio,
        "comparison": claim.comparison,
        "derivation": claim.derivation,
        "notes": claim.notes,
        "price_set_now": entry.price_set.name,
        "verdict_then": verdict_out(reckoning.then),
        "verdict_now": verdict_out(reckoning.now),
        "tiers_then": [verdict_out(v) for v in reckoning.tiers_then],
        "tiers_now": [verdict_out(v) for v in reckoning.tiers_now],
        "timeline": [verdict_out(v) for v in reckoning.timeline],
        "never_held": reckoning.never_held,
        "stopped_holding_on": reckoning.stopped_holding_on.isoformat()
        if reckoning.stopped_holding_on
        else None,
        "stored_runs": {
            "holds": runs.holds,
            "ratio": runs.ratio,
            "run_a": runs.runs[0],
            "run_b": runs.runs[1],
            "reason": runs.reason,
            "rule": asking.answer.rule if asking else None,
            "slo": asking.answer.slo.describe() if asking else None,
            "differs": list(asking.answer.differs) if asking else [],
            "odds": odds_out(asking.odds) if asking else None,
        },
        "flips": [
            {
                "at": f.at.isoformat(),
                "cause": f.cause,
                "price_set": f.price_set,
                "summary": f.summary,
            }
            for f in entry.flips
        ],
    }


@router.get(
    "/claims", response={200: list[dict[str, Any]], 422: Errors}, summary="The claims ledger"
)
def claims(request: HttpRequest, query: Query[LedgerQuery]):
    """Every published claim the product knows, re-priced under the dated price sets and
    checked against the stored runs through the one answer."""
    entries = ledger_entries(org=optional_org(request), prices_as_of=query.prices_as_of)
    return [entry_out(entry) for entry in entries]


@router.get(
    "/claims/{slug}", response={200: dict[str, Any], 404: Errors, 422: Errors}, summary="A claim"
)
def claim(request: HttpRequest, slug: str, query: Query[LedgerQuery]):
    entry = ledger_entry(slug, org=optional_org(request), prices_as_of=query.prices_as_of)
    if entry is None:
        return Status(404, error_body("slug", f"no claim {slug[:60]!r} in the ledger"))
    return entry_out(entry)
