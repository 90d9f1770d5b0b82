"""Writes for the claims ledger: the shipped claims stored, each claim's standing kept in step
with the price sets and the stored runs, a flip recorded and its subscribers told.

Evaluation runs from the scheduler's loop (`manage.py runscheduler`, `claims_tick`) and from
`loadreference`, never inside a request: it asks the one answer once per claim.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from apps.claims.models import (
    ClaimAlert,
    ClaimFlip,
    ClaimStanding,
    ClaimSubscription,
    PublishedClaim,
)
from apps.claims.selectors import LedgerEntry, ledger_entries
from apps.costs.reference import PriceSet, price_sets
from apps.regressions.services import backoff, send
from apps.runs.models import Run

log = logging.getLogger(__name__)

CLAIMS_FILE = Path(__file__).parent / "reference" / "claims.json"


def claims_load(*, path: Path = CLAIMS_FILE) -> int:
    """Store (or update) the shipped claims; returns how many. Standing and flips are kept."""
    data = json.loads(path.read_text())
    for order, entry in enumerate(data["claims"]):
        PublishedClaim.objects.update_or_create(
            slug=entry["slug"],
            defaults={
                "title": entry["title"],
                "statement": entry["statement"],
                "published_on": entry["published_on"],
                "source": entry["source"],
                "kind": entry["kind"],
                "side_a": entry["a"],
                "side_b": entry["b"],
                "workload": entry["workload"],
                "figures": entry["figures"],
                "basis": entry["basis"],
                "throughput_ratio": entry["throughput_ratio"],
                "claimed_ratio": entry["claimed_ratio"],
                "comparison": entry["comparison"],
                "derivation": entry.get("derivation", ""),
                "notes": entry.get("notes", ""),
                "order": order,
            },
        )
    return len(data["claims"])


def _standing(entry: LedgerEntry) -> dict[str, Any]:
    now = entry.reckoning.now
    return {
        "price_set": entry.price_set.name,
        "holds_on_figures": now.holds if now else None,
        "holds_on_runs": entry.runs.holds,
        "runs_ratio": entry.runs.ratio,
        "runs": list(entry.runs.runs),
    }


def _said(holds: bool | None) -> str:
    return {True: "holds", False: "does not hold", None: "unchecked"}[holds]


def _summary(claim: PublishedClaim, before: dict[str, Any], after: dict[str, Any]) -> str:
    parts = []
    if before["holds_on_figures"] != after["holds_on_figures"]:
        parts.append(
            f"on its own figures it {_said(before['holds_on_figures'])} under "
            f"{before['price_set']} and {_said(after['holds_on_figures'])} under "
            f"{after['price_set']}"
        )
    if before["holds_on_runs"] != after["holds_on_runs"]:
        ratio = after["runs_ratio"]
        parts.append(
            f"on the stored runs it {_said(before['holds_on_runs'])} before and "
            f"{_said(after['holds_on_runs'])} now"
            + (f" (runs {after['runs'][0]} vs {after['runs'][1]}, {ratio:.3f}×)" if ratio else "")
        )
    return f"“{claim.title}”: " + "; ".join(parts) + "."


def _flipped(before: bool | None, after: bool | None) -> bool:
    """A verdict flips between holding and not; a check that appears or goes is no flip."""
    return before is not None and after is not None and before != after


@transaction.atomic
def claims_evaluate(
    *, sets: Sequence[PriceSet] | None = None, now: datetime | None = None
) -> list[ClaimFlip]:
    """Each claim's standing under the newest of `sets` (the shipped ones by default) and on
    the public stored runs; a verdict that changed since the last evaluation is a flip,
    recorded once and queued for every active subscription that matches it."""
    now = now or timezone.now()
    sets = tuple(sets) if sets is not None else price_sets()
    claims = list(PublishedClaim.objects.select_related("standing").prefetch_related("flips"))
    entries = ledger_entries(org=None, sets=sets, claims=claims)
    flips = []
    for entry in entries:
        after = _standing(entry)
        standing = getattr(entry.claim, "standing", None)
        if standing is not None:
            before = {
                "price_set": standing.price_set,
                "holds_on_figures": standing.holds_on_figures,
                "holds_on_runs": standing.holds_on_runs,
                "runs_ratio": standing.runs_ratio,
                "runs": standing.runs,
            }
            figures = _flipped(before["holds_on_figures"], after["holds_on_figures"])
            runs = _flipped(before["holds_on_runs"], after["holds_on_runs"])
            if figures or runs:
                cause = (
                    ClaimFlip.Cause.PRICE_SET
                    if before["price_set"] != after["price_set"]
                    else ClaimFlip.Cause.RUNS
                )
                flips.append(
                    ClaimFlip.objects.create(
                        claim=entry.claim,
                        at=now,
                        cause=cause,
                        price_set=after["price_set"],
                        before=before,
                        after=after,
                        summary=_summary(entry.claim, before, after),
                    )
                )
        ClaimStanding.objects.update_or_create(
            claim=entry.claim,
            defaults={
                "price_set": after["price_set"],
                "holds_on_figures": after["holds_on_figures"],
                "holds_on_runs": after["holds_on_runs"],
                "runs_ratio": after["runs_ratio"],
                "runs": after["runs"],
                "evaluated_at": now,
            },
        )
    for flip in flips:
        for subscription in ClaimSubscription.objects.filter(active=True):
            if subscription.claim_id in (None, flip.claim_id):
                ClaimAlert.objects.get_or_create(
                    subscription=subscription, flip=flip, defaults={"next_attempt_at": now}
                )
    return flips


def flip_payload(flip: ClaimFlip) -> dict[str, Any]:
    claim = flip.claim
    site = settings.SITE_URL.rstrip("/")
    return {
        "type": "inferboard.claim_flip",
        "claim": claim.slug,
        "title": claim.title,
        "url": f"{site}/claims/#{claim.slug}",
        "source": claim.source.get("url", ""),
        "published_on": claim.published_on.isoformat(),
        "cause": flip.cause,
        "price_set": flip.price_set,
        "before": flip.before,
        "after": flip.after,
        "summary": flip.summary,
        "at": flip.at.isoformat(),
    }


def claim_alerts_deliver(*, now: datetime | None = None) -> int:
    """Try every pending claim alert that is due, through the one delivery regression alerts
    use; a failure is retried after a doubling wait until REGRESSION_ALERT_ATTEMPTS tries.
    Returns the alerts sent."""
    now = now or timezone.now()
    most = settings.REGRESSION_ALERT_ATTEMPTS
    sent = 0
    due = ClaimAlert.objects.filter(status=ClaimAlert.Status.PENDING, next_attempt_at__lte=now)
    for alert in due.select_related("subscription", "flip__claim"):
        flip = alert.flip
        ok, code, error = send(
            alert.subscription,
            subject=f"[inferboard] claim {flip.claim.slug}: its verdict changed",
            text=flip.summary,
            payload=flip_payload(flip),
            delivery=f"claim-{alert.pk}-{alert.attempts + 1}",
        )
        alert.attempts += 1
        alert.status_code, alert.error = code, error
        if ok:
            alert.status, alert.sent_at = ClaimAlert.Status.SENT, now
            sent += 1
        elif alert.attempts >= most:
            alert.status = ClaimAlert.Status.FAILED
        else:
            alert.next_attempt_at = now + backoff(alert.attempts)
        alert.save()
    return sent


def claims_tick(*, now: datetime | None = None) -> tuple[int, int]:
    """The scheduler's tick: evaluate when a claim has no standing, a newer price set shipped
    or a run was stored since the last evaluation; then deliver what is due. Returns the
    flips found and the alerts sent."""
    now = now or timezone.now()
    newest = price_sets()[-1].name
    standings = ClaimStanding.objects.aggregate(last=Max("evaluated_at"))["last"]
    stale = (
        standings is None
        or PublishedClaim.objects.filter(standing__isnull=True).exists()
        or ClaimStanding.objects.exclude(price_set=newest).exists()
        or Run.objects.filter(created_at__gt=standings).exists()
    )
    flips = claims_evaluate(now=now) if stale else []
    return len(flips), claim_alerts_deliver(now=now)
