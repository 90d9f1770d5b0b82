"""What the claim checker (/costs/claim/) takes from the ledger: a published claim as the
checker's fields, so the checker, the ledger and the story check a claim one way.

The ledger's claims are read from the database (`loadreference` stores them) and, on a site
that has not loaded them yet, from the shipped file they are loaded from.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from apps.claims.models import PublishedClaim
from apps.claims.services import CLAIMS_FILE
from apps.costs.answer_selectors import DEFAULT_TIER

# The claim the checker opens on: the seed story's "under half the cost".
SEED_CLAIM = "wafer-glm52-half-cost"


@cache
def shipped_claims() -> dict[str, dict[str, Any]]:
    """The shipped ledger file's claims by slug (what `loadreference` stores)."""
    return {entry["slug"]: entry for entry in json.loads(CLAIMS_FILE.read_text())["claims"]}


def _entry(claim: PublishedClaim) -> dict[str, Any]:
    return {
        "slug": claim.slug,
        "title": claim.title,
        "kind": claim.kind,
        "a": claim.side_a,
        "b": claim.side_b,
        "published_on": claim.published_on.isoformat(),
        "source": claim.source,
        "workload": claim.workload,
        "basis": claim.basis,
        "throughput_ratio": claim.throughput_ratio,
        "claimed_ratio": claim.claimed_ratio,
        "comparison": claim.comparison,
    }


def ledger_claims() -> list[dict[str, Any]]:
    """The cost claims the checker offers (a throughput claim names no cost to check)."""
    stored = [_entry(c) for c in PublishedClaim.objects.all()]
    return [c for c in stored or list(shipped_claims().values()) if c["kind"] == "cost"]


def ledger_claim(slug: str) -> dict[str, Any] | None:
    """One cost claim of the ledger (as `ledger_claims` lists it), or None."""
    return next((c for c in ledger_claims() if c["slug"] == slug), None) if slug else None


def claim_fields(slug: str) -> dict[str, str]:
    """The checker's fields for a ledger claim: its figures, sides, basis tier, the prices of
    its own date, and its workload as the stored runs' question; {} for no such cost claim."""
    claim = ledger_claim(slug)
    return fields_of(claim) if claim is not None else {}


def fields_of(claim: dict[str, Any]) -> dict[str, str]:
    """A ledger claim (as `ledger_claims` lists it) as the checker's fields."""
    work, tier = claim["workload"], claim["basis"].get("tier") or DEFAULT_TIER
    floor = work.get("interactivity_min")
    return {
        "claim": claim["slug"],
        "throughput_ratio": f"{claim['throughput_ratio']:g}",
        "claimed_cost_ratio": f"{claim['claimed_ratio']:g}",
        "comparison": claim["comparison"],
        "accelerator_a": claim["a"],
        "accelerator_b": claim["b"],
        "tier_a": tier,
        "tier_b": tier,
        "prices_as_of": claim["published_on"],
        "model": work.get("model", ""),
        "scenario": work.get("scenario", ""),
        "precision": work.get("precision", "any"),
        "spec": work.get("spec", "any"),
        "engine": work.get("engine", "any"),
        "interactivity_min": "" if floor is None else f"{floor:g}",
        "token_kind": work.get("token_basis", "output"),
    }
