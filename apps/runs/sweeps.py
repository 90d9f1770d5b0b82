"""Which run stands for a deployment in a scenario: its latest complete sweep.

The board's row, the answer's points, /compare/'s columns and /costs/'s rows all read a
deployment through the run this module picks (docs/methodology.md, "Leaderboard run rule"):
its **latest run with as many load levels as its widest run** in the scenario. A newer run with
fewer levels (a partial rerun: one concurrency re-measured) does not displace that sweep; it
is returned beside it, so pages show "newer partial run on <date>" and link it.

On PostgreSQL each deployment costs two index probes (runs_run_latest_idx, runs_run_sweep_idx),
however many runs it has; SQLite, the demo's database, reads the runs in order.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import OuterRef, Q, QuerySet, Subquery

from apps.catalog.models import Deployment
from apps.runs.models import MEASURED_AT, Run

RULE_TEXT = (
    "each deployment's latest complete sweep in this scenario: its latest run with as many "
    "load levels as its widest run (a newer run with fewer levels is shown beside it, dated, "
    "and does not displace it)"
)


@dataclass(frozen=True, slots=True)
class Sweep:
    """A deployment's run in a scenario, and a newer partial run left beside it."""

    deployment_id: int
    run_id: int
    levels: int
    measured_at: datetime | None = None
    partial_run_id: int | None = None
    partial_levels: int = 0
    partial_at: datetime | None = None

    def partial_text(self) -> str:
        """The partial run in words ("newer partial run on 2026-05-22 (1 of 3 levels)"), or ""
        when there is none."""
        if self.partial_run_id is None:
            return ""
        when = f" on {self.partial_at:%Y-%m-%d}" if self.partial_at else ""
        return f"newer partial run{when} ({self.partial_levels} of {self.levels} levels)"


# A self-reported run (posted with an organization's token, not measured by a job of ours)
# that the public sees waits for a reviewer's approval (apps/trust, the review queue) before a
# default view ranks or prices it (issue 53). A private one is its organization's own to rank;
# one without an organization was stored by the service itself (a command, the operator), not
# posted with a token (every token belongs to an organization).
AWAITING_REVIEW = Q(origin=Run.Origin.SUBMITTED, is_public=True, org__isnull=False) & ~Q(
    review__status="approved"
)


def believed(runs: QuerySet[Run], *, include_unreviewed: bool = False) -> QuerySet[Run]:
    """The runs a default view ranks and prices: not flagged by the row audit, and not waiting
    for review (AWAITING_REVIEW). The one rule, applied by sweeps() (/costs/, /compare/, the
    answer) and by the board (apps.leaderboard: its "best" rows; its "latest" rows hide a
    deployment whose sweep is not believed). `include_unreviewed`: the runs waiting for
    review too (/costs/' `unreviewed=1`, labelled; /compare/ and the answer of named
    deployments)."""
    runs = runs.filter(audit_flagged=False)
    return runs if include_unreviewed else runs.exclude(AWAITING_REVIEW)


def sweeps(
    runs: QuerySet[Run],
    *,
    scenario_id: int | None,
    deployments: QuerySet[Deployment] | None = None,
    believed_only: bool = True,
    include_unreviewed: bool = False,
) -> dict[int, Sweep]:
    """Deployment id -> its Sweep, among `runs` (already narrowed to what the caller may see
    and asks for). `deployments` bounds the walk on PostgreSQL (default: those of `runs`).
    `believed_only`: among believed runs only (believed()); the board passes False and hides
    the rows whose run is not, as it hides one failing its rules. `include_unreviewed`: see
    believed()."""
    if believed_only:
        runs = believed(runs, include_unreviewed=include_unreviewed)
    runs = runs.filter(levels__gt=0).annotate(measured_at=MEASURED_AT)
    if connection.vendor == "postgresql" and scenario_id is not None:
        return _by_index(runs, scenario_id, deployments)
    return _in_order(runs)


def _by_index(
    runs: QuerySet[Run], scenario_id: int, deployments: QuerySet[Deployment] | None
) -> dict[int, Sweep]:
    in_scenario = runs.filter(scenario_id=scenario_id, deployment_id=OuterRef("pk"))
    latest = in_scenario.order_by("-measured_at", "-id").values("id")[:1]
    widest = in_scenario.order_by("-levels", "-measured_at", "-id").values("id")[:1]
    if deployments is None:
        deployments = Deployment.objects.filter(pk__in=runs.values("deployment_id"))
    # Read the ids first: as one query the planner hashed every run to join them.
    pairs = [
        (latest_id, widest_id)
        for latest_id, widest_id in deployments.annotate(
            latest=Subquery(latest), widest=Subquery(widest)
        ).values_list("latest", "widest")
        if latest_id is not None
    ]
    facts = {
        row["id"]: row
        for row in Run.objects.filter(pk__in={i for pair in pairs for i in pair})
        .annotate(measured_at=MEASURED_AT)
        .values("id", "deployment_id", "levels", "measured_at")
    }
    return {
        facts[latest_id]["deployment_id"]: _sweep(facts[latest_id], facts[widest_id])
        for latest_id, widest_id in pairs
    }


def _in_order(runs: QuerySet[Run]) -> dict[int, Sweep]:
    latest: dict[int, dict[str, Any]] = {}
    widest: dict[int, dict[str, Any]] = {}
    ordered = runs.order_by("deployment_id", "-measured_at", "-id")
    for row in ordered.values("id", "deployment_id", "levels", "measured_at"):
        deployment = row["deployment_id"]
        latest.setdefault(deployment, row)
        if deployment not in widest or row["levels"] > widest[deployment]["levels"]:
            widest[deployment] = row
    return {d: _sweep(latest[d], widest[d]) for d in latest}


def _sweep(latest: dict[str, Any], widest: dict[str, Any]) -> Sweep:
    if latest["levels"] >= widest["levels"]:
        return Sweep(latest["deployment_id"], latest["id"], latest["levels"], latest["measured_at"])
    return Sweep(
        widest["deployment_id"],
        widest["id"],
        widest["levels"],
        widest["measured_at"],
        partial_run_id=latest["id"],
        partial_levels=latest["levels"],
        partial_at=latest["measured_at"],
    )
