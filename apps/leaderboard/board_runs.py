"""The board's query (Board) and which run each deployment's row shows: the board's filters
on runs, and the pick of each deployment's latest complete sweep (apps/runs/sweeps.py), flat in
the number of runs on PostgreSQL, or of its runs of the last N days."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone

from apps.accounts.models import Organization
from apps.catalog.models import Deployment, Scenario
from apps.costs.formulas import TokenKind
from apps.runs.models import MEASURED_AT, Run
from apps.runs.selectors import RunFilters, deployment_lookups, runs_filtered, runs_narrowed
from apps.runs.sweeps import AWAITING_REVIEW, RULE_TEXT, believed, sweeps

DEFAULT_BEST_DAYS = 30


@dataclass(frozen=True)
class Board:
    model: str | None = None
    scenario: str | None = None
    tier: str = "owning_hyperscaler"
    # The reference price set by name or date (apps/costs/reference.py); empty: the newest.
    prices_as_of: str = ""
    accelerator: str | None = None
    quantization: str | None = None
    include_simulated: bool = False
    deployments: tuple[int, ...] = ()
    sort: str = "throughput"
    page: int = 1
    rule: str = "latest"
    days: int = DEFAULT_BEST_DAYS
    # The token basis of every tok/s and $/Mtok on the board (the calculator's default too).
    basis: str = TokenKind.OUTPUT.value
    # The SLO the rows are judged at: a tier (apps/catalog/slo_tiers.py; None the default)
    # and the bounds set over it (apps/costs/slo_query.py), as (name, value) pairs.
    slo_tier: str | None = None
    slo_bounds: tuple[tuple[str, float | str], ...] = ()
    # Own $/GPU-hr by SKU (apps.costs.prices.price_sheet) over the tier, and its profile's name.
    own_prices: tuple[tuple[str, float], ...] = ()
    price_profile: str = ""
    # Any of several accelerators, engines, quantizations (empty: all), and a date range.
    accelerators: tuple[str, ...] = ()
    engines: tuple[str, ...] = ()
    quantizations: tuple[str, ...] = ()
    servings: tuple[str, ...] = ()
    since: date | None = None
    until: date | None = None
    # Runs labelled "unofficial" (a branch's or a pull request's trial) never rank; True
    # selects only them, for the overlay the board draws beside the official rows.
    unofficial: bool = False
    # Who measured it (Run.Origin; empty: every origin), and whether runs that fail the
    # board's rules (apps/trust/rules.py) are listed too; the default board ranks none of them.
    origins: tuple[str, ...] = ()
    include_unchecked: bool = False
    # The official board: only runs site staff approved through the review queue.
    official: bool = False

    @property
    def origin_choices(self) -> list[str]:
        return list(Run.Origin.values)

    def origin_text(self) -> str:
        """Which origins and rules the board includes, as the page states it."""
        names = self.origins or tuple(Run.Origin.values)
        checked = (
            "runs that fail the board's rules included (marked not checked)"
            if self.include_unchecked
            else "only runs that pass the board's rules (imported ones by their origin's)"
        )
        official = "; official: approved by the site's staff only" if self.official else ""
        return f"origins: {', '.join(names)}; {checked}{official}"

    def rule_text(self) -> str:
        """The run rule, as the page states it."""
        if self.rule == "best":
            return (
                f"each deployment's best run in the last {self.days} days "
                "(best: meets this SLO first, then highest tok/s/GPU at it)"
            )
        return RULE_TEXT


# A leaderboard row's field -> the column of the run it is read from as it is, in the same
# query that picks the runs (apps.leaderboard.selectors.Row). The row's figures are its chosen
# point's, read with the answer's points (apps.costs.answer_selectors.measured_of).
ROW_AS_STORED = {
    "deployment_id": "deployment_id",
    "run_id": "id",
    "accelerator": "deployment__accelerator__sku",
    "gpus": "deployment__gpus",
    "engine": "deployment__engine__name",
    "engine_version": "deployment__engine_version",
    "quantization": "deployment__quant_weights",
    "parallelism": "deployment__parallelism_label",
    "speculative": "deployment__spec_method",
    "flags": "deployment__engine_flags",
    "prefill_gpus": "deployment__prefill_gpus",
    "decode_gpus": "deployment__decode_gpus",
    "provenance": "provenance",
    "origin": "origin",
    "rules_failed": "rules_failed",
    "run_date": "measured_at",
}


def runs_for(board: Board, org: Organization | None):
    runs = runs_narrowed(
        runs_filtered(org=org, filters=_run_filters(board)),
        accelerators=board.accelerators,
        engines=board.engines,
        quantizations=board.quantizations,
        servings=board.servings,
        since=board.since,
        until=board.until,
    )
    if not board.include_simulated:
        runs = runs.exclude(provenance=Run.Provenance.SIMULATED)
    if board.unofficial:
        runs = runs.filter(labels__has_key="unofficial")
    else:
        runs = runs.exclude(labels__has_key="unofficial")
    if board.deployments:
        # A subquery, not a list of ids: a list beside the sweep's per-deployment probe made
        # PostgreSQL expect one run and sort them all (apps.runs.selectors._on_runs).
        runs = runs.filter(deployment__in=Deployment.objects.filter(pk__in=board.deployments))
    if board.origins:
        runs = runs.filter(origin__in=board.origins)
    if board.official:
        runs = runs.filter(review__status="approved")
    return runs


def _run_filters(board: Board) -> RunFilters:
    return RunFilters(
        model=board.model,
        accelerator=board.accelerator,
        quantization=board.quantization,
        scenario=board.scenario,  # an unknown slug matches nothing, not everything
    )


def _board_deployments(board: Board) -> QuerySet[Deployment]:
    """The deployments whose facts the board's filters allow (runs decide the rest)."""
    deployments = Deployment.objects.filter(
        **deployment_lookups(
            _run_filters(board),
            accelerators=board.accelerators,
            engines=board.engines,
            quantizations=board.quantizations,
            servings=board.servings,
        )
    )
    if board.deployments:
        deployments = deployments.filter(pk__in=board.deployments)
    return deployments


def row_runs(runs, board: Board, scenario: Scenario | None) -> list[dict[str, Any]]:
    """The runs the board's rule picks (Board.rule_text says which), with their facts.

    "latest": per deployment, its latest complete sweep (apps/runs/sweeps.py), each row with
    the newer partial run beside it (`sweep`). A sweep that fails the board's rules hides the
    row (apps.leaderboard.selectors._checked): an older run does not stand in for it.
    "best": every run of the last N days, for the board to judge at its SLO and keep each
    deployment's best (apps.leaderboard.selectors.leaderboard_rows)."""
    columns = ("rules_passed", "is_public", "labels", "levels", *ROW_AS_STORED.values())
    runs = runs.annotate(measured_at=MEASURED_AT).filter(levels__gt=0)
    if board.rule == "best":
        if not board.include_unchecked:
            runs = believed(runs.filter(rules_passed=True))
        since = timezone.now() - timedelta(days=max(board.days, 1))
        window = runs.filter(measured_at__gte=since)
        rows = list(window.order_by("deployment_id", "-measured_at", "-id").values(*columns))
        waiting = awaiting_review(rows)
        for row in rows:
            row["awaiting_review"] = row["id"] in waiting
        return rows
    swept = sweeps(
        runs,
        scenario_id=scenario.pk if scenario is not None else None,
        deployments=_board_deployments(board),
        # Flagged and unreviewed runs hide their row (apps.leaderboard.selectors._checked) as
        # a run failing the rules does: an older run does not stand in for them.
        believed_only=False,
    )
    picked = list(
        Run.objects.filter(pk__in=[s.run_id for s in swept.values()])
        .annotate(measured_at=MEASURED_AT)
        .order_by("deployment_id")
        .values(*columns)
    )
    waiting = awaiting_review(picked)
    for row in picked:
        row["sweep"] = swept[row["deployment_id"]]
        row["awaiting_review"] = row["id"] in waiting
    return picked


def awaiting_review(rows: list[dict[str, Any]]) -> set[int]:
    """Which of the rows' runs wait for a reviewer (apps/runs/sweeps.py AWAITING_REVIEW)."""
    ids = [row["id"] for row in rows]
    return set(Run.objects.filter(pk__in=ids).filter(AWAITING_REVIEW).values_list("pk", flat=True))
