"""The board's query (Board) and which run each deployment's row shows: the board's filters
on runs, and the pick of the latest (or best) run per deployment, flat in the number of runs
on PostgreSQL."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from django.db import connection
from django.db.models import Case, Exists, F, OuterRef, QuerySet, Subquery, Value, When
from django.utils import timezone

from apps.accounts.models import Organization
from apps.catalog.models import Deployment, Scenario
from apps.costs.formulas import TokenKind
from apps.runs.models import MEASURED_AT, Point, Run
from apps.runs.selectors import RunFilters, deployment_lookups, runs_filtered, runs_narrowed
from apps.runs.summary import MISSES, UNVERIFIED
from workers import figures

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
                "(best: meets the SLO first, then highest tok/s/GPU)"
            )
        return "each deployment's latest run in this scenario (a regression shows as it is)"


# A leaderboard row's field -> the column of the run it is read from as it is, in the same
# query that ranks the runs (apps.leaderboard.selectors.Row).
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
    "provenance": "provenance",
    "origin": "origin",
    "rules_failed": "rules_failed",
    "interactivity": "best_point__interactivity_p50",
    "success_rate": "best_point__success_rate",
    "run_date": "measured_at",
}
# The row's latency cell (Row.latency_figures), by figure key: each figure's column of the point.
ROW_LATENCY = {f.key: f"best_point__{f.column}" for f in map(figures.figure, figures.BOARD_LATENCY)}
# What else the row is worked out from: its price, throughput, SLO verdict and visibility.
BEST_ROW_COLUMNS = (
    *ROW_AS_STORED.values(),
    *ROW_LATENCY.values(),
    "deployment__accelerator_id",
    "best_point__input_tok_s",
    "best_point__output_tok_s",
    "best_point__total_tok_s",
    "best_point__unlabelled_tok_s",
    "scenario__input_tokens",
    "scenario__output_tokens",
)


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
        runs = runs.filter(deployment_id__in=board.deployments)
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
    """Per deployment, the run the board's rule picks (Board.rule_text says which).

    "latest" picks among every run with points, so a latest run without a rankable point
    (every level client-bound or off its prompt length) hides the row rather than letting
    an older run stand in for it."""
    columns = (
        "rules_passed",
        "is_public",
        "best_meets_slo",
        "best_point",
        "labels",
        *BEST_ROW_COLUMNS,
    )
    runs = runs.annotate(measured_at=MEASURED_AT)
    if board.rule == "best":
        runs = runs.filter(best_point__isnull=False)
        if not board.include_unchecked:
            runs = runs.filter(rules_passed=True)
        since = timezone.now() - timedelta(days=max(board.days, 1))
        ordered = runs.filter(measured_at__gte=since).annotate(
            slo_rank=Case(
                When(best_meets_slo=MISSES, then=Value(0)),
                When(best_meets_slo=UNVERIFIED, then=Value(1)),
                default=Value(2),
            )
        )
        ordered = ordered.order_by(
            "deployment_id", "-slo_rank", F("best_tput_per_gpu").desc(), "-measured_at", "-id"
        )
    else:
        has_points = Exists(Point.objects.filter(run=OuterRef("pk")))
        ordered = runs.filter(has_points).order_by("deployment_id", "-measured_at", "-id")
        if connection.vendor == "postgresql" and scenario is not None:
            # Each deployment's latest run is one walk down runs_run_latest_idx that stops
            # at the first run the filters keep: the board's cost grows with deployments,
            # not with runs (DISTINCT ON sorted every run of the scenario).
            latest = (
                ordered.filter(scenario_id=scenario.pk, deployment_id=OuterRef("pk"))
                .order_by("-measured_at", "-id")
                .values("id")[:1]
            )
            # Read the ids first: as one query the planner hashed every run to join them.
            ids = [
                run_id
                for run_id in _board_deployments(board)
                .annotate(run_id=Subquery(latest))
                .values_list("run_id", flat=True)
                if run_id is not None
            ]
            # In deployment order, as DISTINCT ON gave them: rows that tie keep their order.
            picked = list(
                Run.objects.filter(pk__in=ids)
                .annotate(measured_at=MEASURED_AT)
                .order_by("deployment_id")
                .values(*columns)
            )
            return [row for row in picked if row["best_point"] is not None]
    if connection.vendor == "postgresql":
        picked = list(ordered.distinct("deployment_id").values(*columns))
    else:
        chosen: dict[int, dict[str, Any]] = {}
        for row in ordered.values(*columns):
            chosen.setdefault(row["deployment_id"], row)
        picked = list(chosen.values())
    # "latest" drops a latest run that fails the board's rules after picking it: an older run
    # that passes must not stand in for it (the latest run is the deployment's state).
    return [row for row in picked if row["best_point"] is not None]
