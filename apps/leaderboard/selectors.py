"""Reads behind the leaderboard: its rows, chart points, scenarios and reference prices.

The board's cost must follow its deployments, not its runs (bench/pages.py, 1,000 to 100,000
runs): each deployment's run by index walks (board_runs.py, apps/runs/sweeps.py), each row's
point chosen from that run's points by the answer's rule at the board's SLO tier (the same
choice /answer/, /compare/ and /costs/ make), and what exists (models, facets, the widest
views) by index probes or the trigger-kept RunTally, on PostgreSQL; SQLite, the demo's
database, reads the runs directly.
"""

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from operator import attrgetter
from typing import Any

from django.db import connection
from django.db.models import Count, Max, Q, QuerySet, Sum

from apps.accounts.models import Organization
from apps.accuracy.models import AccuracyResult
from apps.catalog.labels import readable_flags, unique_labels
from apps.catalog.models import Accelerator, Model, Scenario, short_flag
from apps.catalog.selectors import scenario_list
from apps.costs.answer import Measured, Side, best_side, by_deployment
from apps.costs.answer_selectors import gpu_hour_prices, measured_of
from apps.costs.formulas import TokenKind, priced_throughput, throughputs, usd_per_mtok
from apps.costs.prices import prices_by_accelerator_id
from apps.costs.selectors import price_book
from apps.costs.slo import Slo
from apps.costs.slo import verdict as slo_verdict
from apps.costs.slo_query import SloAsk
from apps.leaderboard import board_runs
from apps.leaderboard.board_runs import Board
from apps.runs.models import MEASURED_AT, Point, Run
from apps.runs.selectors import (
    deployments_with_runs,
    runs_visible,
    scenario_ids_with_runs,
    tallies_visible,
    visible_through,
)
from workers import figures
from workers.slo import stored_key

# Sort name -> (the Row's value, descending): a figure's direction is the registry's.
SORTS: dict[str, tuple[Callable[["Row"], Any], bool]] = {
    "throughput": (attrgetter("tput_per_gpu"), figures.FIGURES["tput_per_gpu"].higher),
    "interactivity": (attrgetter("interactivity"), figures.FIGURES["interactivity_p50"].higher),
    "ttft": (lambda row: row.latency_figures["ttft_p50"], figures.FIGURES["ttft_p50"].higher),
    "cost": (attrgetter("usd_per_mtok"), False),
    "accelerator": (attrgetter("accelerator"), False),
}
PAGE_SIZE = 25
# Which run a row shows. "latest" keeps regressions visible; "best" is an option.
RUN_RULES = ("latest", "best")


@dataclass
class Row:
    deployment_id: int
    run_id: int
    accelerator: str
    gpus: int
    engine: str
    engine_version: str
    quantization: str
    parallelism: str
    speculative: str
    flags: list[str]
    provenance: str
    tput_per_gpu: float | None
    tput_kind: str
    meets_slo: bool | None
    interactivity: float | None
    # The latency cell's figures in ms, by key (workers.figures.BOARD_LATENCY).
    latency_figures: dict[str, float | None]
    success_rate: float | None
    usd_per_gpu_hour: float | None
    usd_per_mtok: float | None
    accuracy: dict[str, Any] | None = None
    run_date: datetime | None = None
    basis: str = TokenKind.OUTPUT.value
    # Both readings of a figure whose token kind is unstated (low, high); None when stated.
    tput_range: tuple[float, float] | None = None
    usd_range: tuple[float, float] | None = None
    # An organization's own run that only its members see (badged "private" on the board).
    private: bool = False
    # The run's free labels (branch, commit, pr, unofficial ...), shown on unofficial rows.
    labels: dict[str, str] = field(default_factory=dict)
    # The load level of the point shown ("c=32"), why it misses the SLO when it does, and
    # whether it states no success rate (it then takes part, marked "success not stated").
    level: str = ""
    slo_why: str = ""
    success_unstated: bool = False
    # A newer run with fewer levels left beside the row's sweep (apps/runs/sweeps.py).
    partial: str = ""
    partial_run_id: int | None = None

    @property
    def latency(self) -> list[float | None]:
        """The latency cell's values, in the order it shows them ("TTFT p50 / p99")."""
        return [self.latency_figures[key] for key in figures.BOARD_LATENCY]

    @property
    def labels_text(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in sorted(self.labels.items()) if k != "unofficial")

    origin: str = ""
    rules_failed: list[dict[str, str]] = field(default_factory=list)
    # A public self-reported run no reviewer approved, shown because the visitor asked.
    awaiting_review: bool = False

    # The row's label made unique within its board (apps/catalog/labels.unique_labels).
    name: str = ""
    # A disaggregated deployment's pools (None: one pool serves both phases).
    prefill_gpus: int | None = None
    decode_gpus: int | None = None

    @property
    def per_gpu_over(self) -> str:
        """Which GPUs a per-GPU figure divides by, where pools make it a question."""
        if self.prefill_gpus is None or self.decode_gpus is None:
            return ""
        return (
            f"over all {self.gpus} GPUs ({self.prefill_gpus} prefill + {self.decode_gpus} decode)"
        )

    @property
    def label(self) -> str:
        return self.name or self.base_label

    @property
    def base_label(self) -> str:
        spec = f" · {self.speculative}" if self.speculative else ""
        # Its first readable engine flag: deployments that differ only in flags exist.
        flags = readable_flags(self.flags)[:1]
        flag = f" · {short_flag(flags[0])}" if flags else ""
        return (
            f"{self.gpus}×{self.accelerator} · {self.engine} {self.engine_version} · "
            f"{self.quantization} · {self.parallelism}{spec}{flag}"
        ).replace("  ", " ")


@dataclass
class BoardPage:
    rows: list[Row]
    total: int
    page: int
    pages: int
    scenario: Scenario | None
    model: str | None
    slo_text: str
    rule_text: str = ""
    # Whether the SLO bounds any latency (the column then reads "at SLO"), its tier's name,
    # and how many rows' points state no success rate.
    at_slo: bool = False
    slo_tier: str = ""
    success_unstated: int = 0
    origin_text: str = ""
    # Deployments left off because their run fails the board's rules (the page says so).
    unchecked_hidden: int = 0
    # How many of this view's rows show a public self-reported run waiting for a reviewer
    # (apps/runs/sweeps.py): off the default board, shown marked when asked for.
    awaiting_review: int = 0
    tiers: list[str] = field(default_factory=list)
    run_ids: list[int] = field(default_factory=list)  # every row's run, not just this page
    ranked: list[Row] = field(default_factory=list)  # every row, in the board's order

    @property
    def success_stated(self) -> bool:
        """Whether any row of this page states a success rate (else no Success column)."""
        return any(row.success_rate is not None for row in self.rows)


def model_names(*, org: Organization | None = None) -> list[str]:
    deployments = deployments_with_runs(org=org)
    return list(
        Model.objects.filter(pk__in=deployments.values("model_id"))
        .order_by("name")
        .values_list("name", flat=True)
    )


def widest_views(*, org: Organization | None = None) -> list[tuple[str, str]]:
    """(model, scenario slug) pairs, those whose ranked runs span the most accelerators first:
    the board opens on the first, the view where most hardware can be set side by side on the
    default rules. Views that rank nothing follow, widest first, so a board without a ranked
    run still opens on its widest data. Simulated runs never count (they do not rank with
    measurements)."""
    if connection.vendor == "postgresql":
        # The trigger-kept tally: a few rows per deployment and scenario, however many runs;
        # its `ranked` is the default board's (a point and the rules passed, migration 0013).
        spans = tallies_visible(org=org).filter(scenario__isnull=False)
        ranked, runs = Q(ranked=True), Sum("runs")
    else:
        spans = runs_visible(org=org).filter(scenario__isnull=False)
        ranked, runs = Q(best_point__isnull=False, rules_passed=True), Count("id")
    spans = (
        spans.exclude(provenance=Run.Provenance.SIMULATED)
        .values("deployment__model__name", "scenario__slug", "scenario__is_preset")
        .annotate(
            ranked_accelerators=Count("deployment__accelerator", filter=ranked, distinct=True),
            accelerators=Count("deployment__accelerator", distinct=True),
            runs=runs,
        )
        .order_by(
            "-ranked_accelerators",
            "-accelerators",
            "-scenario__is_preset",
            "-runs",
            "deployment__model__name",
            "scenario__slug",
        )
    )
    return [(row["deployment__model__name"], row["scenario__slug"]) for row in spans]


def imported_sources(*, run_ids: list[int]) -> list[dict[str, Any]]:
    """Which tools' files or APIs the given runs were imported from, how many, and the date
    of the latest measurement: the board says "imported from X, as of <date>"."""
    return list(
        Run.objects.filter(pk__in=run_ids, provenance=Run.Provenance.IMPORTED)
        .exclude(source_tool="")
        .values("source_tool")
        .annotate(runs=Count("id"), as_of=Max(MEASURED_AT))
        .order_by("-runs")
    )


def scenarios_with_runs(*, org: Organization | None = None) -> QuerySet[Scenario]:
    return Scenario.objects.filter(pk__in=scenario_ids_with_runs(org=org))


def price_tiers(prices_as_of: str = "", org: Organization | None = None) -> list[str]:
    """The tiers the price book in force prices (apps.costs.selectors.price_book): the
    reference ones, and the organization's own tiers for its members."""
    book = price_book(org=org, prices_as_of=prices_as_of)
    return sorted({tier for entry in book.values() for tier in entry.usd_per_gpu_hour})


def _checked(rows: list[dict[str, Any]], board: Board) -> tuple[list[dict[str, Any]], int]:
    """The rows the board ranks, and how many it leaves out for failing the board's rules."""
    if board.include_unchecked:
        return rows, 0
    # A public self-reported run waits for a reviewer before it ranks (apps/runs/sweeps.py);
    # flagged runs fail the rule audit_passed.
    kept = [row for row in rows if row["rules_passed"] and not row.get("awaiting_review")]
    return kept, len(rows) - len(kept)


def _accuracy_by_deployment(
    deployment_ids: list[int], org: Organization | None = None
) -> dict[int, dict[str, Any]]:
    latest: dict[int, dict[str, Any]] = {}
    # Only results the caller may see: another organization's private score must not
    # appear beside a deployment's public row.
    results = (
        AccuracyResult.objects.filter(
            visible_through("run", org=org), deployment_id__in=deployment_ids
        )
        .order_by("deployment_id", "-run__created_at")
        .values("deployment_id", "task", "metric", "score", "ci_low", "ci_high", "n")
    )
    for result in results:
        latest.setdefault(result["deployment_id"], result)
    return latest


def reference_prices(
    tier: str,
    own: tuple[tuple[str, float], ...] = (),
    prices_as_of: str = "",
    org: Organization | None = None,
) -> dict[int, float]:
    """accelerator id -> $/GPU-hr at a tier of the one price book
    (apps.costs.selectors.price_book, the set in force on `prices_as_of`, the organization's own
    tiers over the reference ones), with the visitor's own prices
    (apps.costs.prices.price_sheet: their organization's profile, the URL's) on top."""
    book = price_book(org=org, prices_as_of=prices_as_of)
    by_sku = {
        sku.upper(): entry.usd_per_gpu_hour[tier]
        for sku, entry in book.items()
        if tier in entry.usd_per_gpu_hour
    }
    found = {
        pk: by_sku[sku.upper()]
        for pk, sku in Accelerator.objects.values_list("pk", "sku")
        if sku.upper() in by_sku
    }
    return found | prices_by_accelerator_id(dict(own))


def reference_price_book(prices_as_of: str = "") -> dict[str, dict[str, float]]:
    """SKU -> tier -> $/GPU-hr, reference tiers only, from the one price book."""
    book = price_book(prices_as_of=prices_as_of)
    return {sku: dict(entry.usd_per_gpu_hour) for sku, entry in book.items()}


def _both(low: float | None, high: float | None) -> tuple[float, float] | None:
    """Both readings of a figure of unstated kind, or None when either is missing."""
    return None if low is None or high is None else (low, high)


def leaderboard_rows(*, board: Board, org: Organization | None = None) -> BoardPage:
    # By slug from the URL: only a scenario the caller may see (another organization's
    # scenario name and SLO must not show for a guessed slug).
    visible = scenario_list(org=org)
    scenario = visible.filter(slug=board.scenario).first() if board.scenario else None
    asked = SloAsk(board.slo_tier, dict(board.slo_bounds)).resolve(scenario)
    runs = board_runs.runs_for(board, org)
    picked = board_runs.row_runs(runs, board, scenario)
    awaiting = sum(bool(row.get("awaiting_review")) for row in picked)
    candidates, unchecked = _checked(picked, board)
    prices = gpu_hour_prices(
        org=org, tier=board.tier, own=dict(board.own_prices), prices_as_of=board.prices_as_of
    )
    points: dict[int, list[Measured]] = {}
    chosen = Run.objects.filter(pk__in=[c["id"] for c in candidates])
    for point in measured_of(chosen, basis=TokenKind(board.basis), prices=prices):
        points.setdefault(point.run_id, []).append(point)
    picks = _picks(candidates, points, asked.slo, board)
    accuracy = _accuracy_by_deployment([b["deployment_id"] for b, _ in picks], org)
    rows = [_row(b, side, asked.slo, board, accuracy) for b, side in picks]
    _name_rows(rows)
    value, descending = SORTS.get(board.sort, SORTS["throughput"])
    present = [r for r in rows if value(r) is not None]
    missing = [r for r in rows if value(r) is None]
    present.sort(key=value, reverse=descending)
    # A deployment whose every point misses the SLO never outranks one that meets it.
    rows = [r for r in present + missing if r.meets_slo is not False] + [
        r for r in present + missing if r.meets_slo is False
    ]
    pages = max(1, -(-len(rows) // PAGE_SIZE))
    page = min(max(board.page, 1), pages)
    return BoardPage(
        rows=rows[(page - 1) * PAGE_SIZE : page * PAGE_SIZE],
        total=len(rows),
        page=page,
        pages=pages,
        scenario=scenario,
        model=board.model,
        slo_text=asked.describe(),
        rule_text=board.rule_text(),
        origin_text=board.origin_text(),
        unchecked_hidden=unchecked,
        awaiting_review=awaiting,
        run_ids=[r.run_id for r in rows],
        ranked=rows,
        tiers=price_tiers(board.prices_as_of),
        at_slo=asked.bounds_latency,
        slo_tier=asked.tier.name,
        success_unstated=sum(r.success_unstated for r in rows),
    )


def _name_rows(rows: list[Row]) -> None:
    """One label per deployment, unique within the board: rows that still read alike are
    told apart by their further readable engine flags, else their ids."""
    names = unique_labels(
        {r.deployment_id: r.base_label for r in rows},
        {r.deployment_id: [short_flag(f) for f in readable_flags(r.flags)[1:]] for r in rows},
    )
    for row in rows:
        row.name = names[row.deployment_id]


def _picks(
    candidates: list[dict[str, Any]], points: dict[int, list[Measured]], slo: Slo, board: Board
) -> list[tuple[dict[str, Any], Side]]:
    """Each deployment's run and the point the answer's rule chooses in it (its best measured
    point meeting the SLO; else the nearest, which misses; else its best that cannot be
    checked). Under "best", the run whose choice ranks highest (meets first, then tok/s/GPU)."""
    best: dict[int, tuple[tuple[int, float], dict[str, Any], Side]] = {}
    for candidate in candidates:
        own = points.get(candidate["id"], [])
        side = best_side(own, f"#{candidate['deployment_id']}", slo, side_of=by_deployment)
        if side.point is None:
            fallback = side.nearest or max(own, key=_by_throughput, default=None)
            if fallback is None:
                continue  # no valid point: the row is hidden, not stood in for
            side = replace(side, point=fallback, tok_s_per_gpu=fallback.tok_s_per_gpu)
        key = (_STATUS_RANK.get(side.status, 1), side.tok_s_per_gpu or 0.0)
        held = best.get(candidate["deployment_id"])
        if held is None or (board.rule == "best" and key > held[0]):
            best[candidate["deployment_id"]] = (key, candidate, side)
    return [(candidate, side) for _, candidate, side in best.values()]


# Which row "best" prefers: one that meets the SLO, then one that cannot be checked.
_STATUS_RANK = {"meets": 2, "cannot_check": 1, "misses": 0}


def _by_throughput(point: Measured) -> float:
    return point.tok_s_per_gpu or 0.0


def _row(
    b: dict[str, Any],
    side: Side,
    slo: Slo,
    board: Board,
    accuracy: dict[int, dict[str, Any]],
) -> Row:
    point = side.point
    assert point is not None  # _picks keeps only rows with a point
    verdict = slo_verdict(point.slo_point(), slo)
    tput, price = side.tok_s_per_gpu, point.usd_per_gpu_hour
    readings = point.tok_s_range
    sweep = b.get("sweep")
    return Row(
        **{field: b[column] for field, column in board_runs.ROW_AS_STORED.items()},
        latency_figures={key: _ms(point, key) for key in figures.BOARD_LATENCY},
        interactivity=point.interactivity_p50,
        success_rate=point.success_rate,
        private=not b["is_public"],
        awaiting_review=b.get("awaiting_review", False),
        labels=b.get("labels") or {},
        tput_per_gpu=tput,
        tput_kind=board.basis if point.basis_stated else "unstated",
        meets_slo=None if not slo.bounds or verdict.status == "cannot_check" else verdict.meets,
        usd_per_gpu_hour=price,
        usd_per_mtok=usd_per_mtok(price, tput) if price is not None and tput else None,
        accuracy=accuracy.get(b["deployment_id"]),
        basis=board.basis,
        tput_range=readings,
        usd_range=tuple(sorted(usd_per_mtok(price, r) for r in readings))  # type: ignore[arg-type]
        if readings and price is not None
        else None,
        level=point.level,
        slo_why="; ".join(verdict.failed or verdict.missing),
        success_unstated=bool(slo.bounds) and verdict.success_unstated,
        partial=sweep.partial_text() if sweep else "",
        partial_run_id=sweep.partial_run_id if sweep else None,
    )


def _ms(point: Measured, key: str) -> float | None:
    """A latency figure of the point in ms, from the answer's metrics (in s)."""
    distribution, percentile = figures.figure(key).slot or ("", "")
    value = point.metrics.get(f"{distribution}_s.{stored_key(percentile)}")
    return value * 1000 if value is not None else None


def chart_points(
    *, run_ids: list[int], board: Board, org: Organization | None = None
) -> list[dict[str, Any]]:
    """Every point of the given runs (the leaderboard's rows), for Pareto charts, priced the
    way the board's rows are: its tier with the visitor's own prices, its basis, a figure of
    unstated kind at its lower reading and labelled so. It takes the whole board, not its
    parts, so no chart can be priced apart from the rows beside it (the unofficial overlay
    once was, at the tier's prices alone); the organization's own tiers too, as the rows'."""
    prices = reference_prices(board.tier, board.own_prices, board.prices_as_of, org)
    book = price_book(org=org, prices_as_of=board.prices_as_of)
    power = {sku.upper(): e.all_in_kw for sku, e in book.items()}
    basis = board.basis
    rows = Point.objects.filter(run_id__in=run_ids).values(
        "run_id",
        "run__deployment_id",
        "run__deployment__accelerator__sku",
        "run__deployment__accelerator_id",
        "run__deployment__quant_weights",
        "run__deployment__engine__name",
        "run__deployment__parallelism_label",
        "run__deployment__gpus",
        "run__scenario__input_tokens",
        "run__scenario__output_tokens",
        "concurrency",
        "input_tok_s",
        "output_tok_s",
        "total_tok_s",
        "unlabelled_tok_s",
        "interactivity_p50",
        "e2el_p50_ms",
        # What the one validity rule reads (workers.figures.PointView), as the tables do.
        "client_bound",
        "prompt_length_mismatch_rate",
        "success_rate",
    )
    out = []
    for r in rows:
        row = {key.removeprefix("run__deployment__"): value for key, value in r.items()}
        price = prices.get(row["accelerator_id"])
        priced = priced_throughput(
            TokenKind(basis),
            gpus=row["gpus"],
            usd_per_gpu_hour=price,
            **throughputs(row),
            input_tokens=row["run__scenario__input_tokens"],
            output_tokens=row["run__scenario__output_tokens"],
        )
        tput, kw = priced.tok_per_s_per_gpu, power.get(row["accelerator__sku"].upper())
        sku, quant = row["accelerator__sku"], row["quant_weights"]
        level = f" c={row['concurrency']}" if row["concurrency"] else ""
        unstated = "" if priced.stated else " (kind unstated: lower reading)"
        out.append(
            {
                "run_id": row["run_id"],
                "deployment_id": row["run__deployment_id"],
                "group": f"{sku} {quant}",
                # The dimensions a chart's series can be split by (charts.SERIES).
                "engine": row["engine__name"],
                "accelerator": sku,
                "precision": quant,
                "parallelism": row["parallelism_label"] or f"{row['gpus']} GPUs",
                "config": (
                    f"{row['gpus']}×{sku} {row['engine__name']} {quant} "
                    f"{row['parallelism_label']}{level}{unstated}"
                ),
                "tput_per_gpu": tput,
                "usd_per_mtok": priced.usd_per_mtok if priced.stated else priced.usd_high,
                # tokens per second per megawatt of all-in facility power
                "tok_per_mw": tput / kw * 1000 if tput and kw else None,
                "interactivity": row["interactivity_p50"],
                "e2el_s": row["e2el_p50_ms"] / 1000 if row["e2el_p50_ms"] is not None else None,
                # A point the tables refuse is drawn hollow with this reason, never on a
                # front (charts.pareto_figure): None when it may stand for its deployment.
                "invalid": figures.PointView.of(row).invalid_reason(),
            }
        )
    return out
