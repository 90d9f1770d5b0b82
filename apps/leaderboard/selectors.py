"""Reads behind the leaderboard: its rows, chart points, scenarios and reference prices.

The board's cost must follow its deployments, not its runs (bench/pages.py, 1,000 to 100,000
runs): each run's leaderboard point is chosen at ingestion (Run.best_point), each
deployment's run by an index walk (board_runs.py), and what exists (models, facets, the
widest views) by index probes or the trigger-kept RunTally, on PostgreSQL; SQLite, the demo's
database, reads the runs directly.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from operator import attrgetter
from typing import Any

from django.db import connection
from django.db.models import Count, Max, Q, QuerySet, Sum

from apps.accounts.models import Organization
from apps.accuracy.models import AccuracyResult
from apps.catalog.models import Accelerator, Model, Scenario, short_flag
from apps.catalog.selectors import scenario_list
from apps.costs.formulas import TokenKind, priced_throughput, throughputs
from apps.costs.prices import prices_by_accelerator_id
from apps.costs.selectors import price_book
from apps.leaderboard import board_runs
from apps.leaderboard.board_runs import Board
from apps.runs.models import MEASURED_AT, Point, Run
from apps.runs.selectors import (
    deployments_with_runs,
    runs_visible,
    tallies_visible,
    visible_through,
)
from apps.runs.summary import MEETS, UNVERIFIED, scenario_slo
from workers import figures

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

    @property
    def latency(self) -> list[float | None]:
        """The latency cell's values, in the order it shows them ("TTFT p50 / p99")."""
        return [self.latency_figures[key] for key in figures.BOARD_LATENCY]

    @property
    def labels_text(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in sorted(self.labels.items()) if k != "unofficial")

    origin: str = ""
    rules_failed: list[dict[str, str]] = field(default_factory=list)

    @property
    def label(self) -> str:
        spec = f" · {self.speculative}" if self.speculative else ""
        # Deployments that differ only in engine flags must still be told apart.
        flags = f" · {short_flag(self.flags[0])}" if self.flags else ""
        return (
            f"{self.gpus}×{self.accelerator} · {self.engine} {self.engine_version} · "
            f"{self.quantization} · {self.parallelism}{spec}{flags}"
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
    origin_text: str = ""
    # Deployments left off because their run fails the board's rules (the page says so).
    unchecked_hidden: int = 0
    tiers: list[str] = field(default_factory=list)
    run_ids: list[int] = field(default_factory=list)  # every row's run, not just this page
    ranked: list[Row] = field(default_factory=list)  # every row, in the board's order


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
    ids = runs_visible(org=org).values("scenario_id")
    return Scenario.objects.filter(pk__in=ids)


def price_tiers(prices_as_of: str = "") -> list[str]:
    """The reference tiers the price book in force prices (apps.costs.selectors.price_book)."""
    book = price_book(prices_as_of=prices_as_of)
    return sorted({tier for entry in book.values() for tier in entry.usd_per_gpu_hour})


def _slo_text(scenario: Scenario | None) -> str:
    return scenario_slo(scenario).describe()


def _checked(rows: list[dict[str, Any]], board: Board) -> tuple[list[dict[str, Any]], int]:
    """The rows the board ranks, and how many it leaves out for failing the board's rules."""
    if board.include_unchecked:
        return rows, 0
    kept = [row for row in rows if row["rules_passed"]]
    return kept, len(rows) - len(kept)


def _accuracy_by_deployment(
    deployment_ids: list[int], org: Organization | None = None
) -> dict[int, dict[str, Any]]:
    latest: dict[int, dict[str, Any]] = {}
    # Only results the caller may see: another organization's private score must not
    # appear beside a deployment's public row.
    results = (
        AccuracyResult.objects.filter(
            visible_through("run", org=org), run__deployment_id__in=deployment_ids
        )
        .order_by("run__deployment_id", "-run__created_at")
        .values("run__deployment_id", "task", "metric", "score", "ci_low", "ci_high", "n")
    )
    for result in results:
        latest.setdefault(result["run__deployment_id"], result)
    return latest


def reference_prices(
    tier: str, own: tuple[tuple[str, float], ...] = (), prices_as_of: str = ""
) -> dict[int, float]:
    """accelerator id -> $/GPU-hr at a reference tier of the one price book
    (apps.costs.selectors.price_book, the set in force on `prices_as_of`), with the visitor's
    own prices (apps.costs.prices.price_sheet: their organization's profile, the URL's) on top."""
    book = price_book(prices_as_of=prices_as_of)
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
    runs = board_runs.runs_for(board, org)
    best, unchecked = _checked(board_runs.row_runs(runs, board, scenario), board)
    prices = reference_prices(board.tier, board.own_prices, board.prices_as_of)
    accuracy = _accuracy_by_deployment([b["deployment_id"] for b in best], org)
    rows = []
    for b in best:
        p = {
            k.removeprefix("best_point__"): v for k, v in b.items() if k.startswith("best_point__")
        }
        price = prices.get(b["deployment__accelerator_id"])
        priced = priced_throughput(
            TokenKind(board.basis),
            gpus=b["deployment__gpus"],
            usd_per_gpu_hour=price,
            **throughputs(p),
            input_tokens=b["scenario__input_tokens"],
            output_tokens=b["scenario__output_tokens"],
        )
        rows.append(
            Row(
                **{field: b[column] for field, column in board_runs.ROW_AS_STORED.items()},
                latency_figures={key: b[column] for key, column in board_runs.ROW_LATENCY.items()},
                private=not b["is_public"],
                labels=b.get("labels") or {},
                tput_per_gpu=priced.tok_per_s_per_gpu,
                tput_kind=board.basis if priced.stated else "unstated",
                meets_slo=None
                if b["best_meets_slo"] in (None, UNVERIFIED)
                else b["best_meets_slo"] == MEETS,
                usd_per_gpu_hour=price,
                usd_per_mtok=priced.usd_per_mtok,
                accuracy=accuracy.get(b["deployment_id"]),
                basis=board.basis,
                tput_range=None if priced.stated else _both(priced.tok_low, priced.tok_high),
                usd_range=None if priced.stated else _both(priced.usd_low, priced.usd_high),
            )
        )
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
        slo_text=_slo_text(scenario),
        rule_text=board.rule_text(),
        origin_text=board.origin_text(),
        unchecked_hidden=unchecked,
        run_ids=[r.run_id for r in rows],
        ranked=rows,
        tiers=price_tiers(board.prices_as_of),
    )


def chart_points(*, run_ids: list[int], board: Board) -> list[dict[str, Any]]:
    """Every point of the given runs (the leaderboard's rows), for Pareto charts, priced the
    way the board's rows are: its tier with the visitor's own prices, its basis, a figure of
    unstated kind at its lower reading and labelled so. It takes the whole board, not its
    parts, so no chart can be priced apart from the rows beside it (the unofficial overlay
    once was, at the tier's prices alone)."""
    prices = reference_prices(board.tier, board.own_prices, board.prices_as_of)
    power = {
        sku.upper(): e.all_in_kw for sku, e in price_book(prices_as_of=board.prices_as_of).items()
    }
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
            }
        )
    return out
