"""Reads behind the public pages: leaderboard rows, chart points, history, comparisons.

The leaderboard must stay fast with tens of thousands of runs, so the best point per
deployment is chosen in SQL (DISTINCT ON) on PostgreSQL; SQLite reduces in Python.
"""

from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from django.db import connection
from django.db.models import Case, Count, Exists, F, Max, OuterRef, QuerySet, Value, When
from django.db.models.functions import Coalesce
from django.utils import timezone

from apps.accounts.models import Organization
from apps.accuracy.models import AccuracyResult
from apps.catalog.models import Deployment, Model, PriceTier, Scenario
from apps.catalog.selectors import scenario_list
from apps.costs.formulas import TokenKind, priced_throughput
from apps.costs.prices import prices_by_accelerator_id
from apps.runs import summary
from apps.runs.models import Point, RequestRecord, Run
from apps.runs.selectors import RunFilters, runs_filtered, runs_narrowed, runs_visible
from apps.runs.summary import MEETS, MISSES, UNVERIFIED, scenario_slo

SORTS = {
    "throughput": ("tput_per_gpu", True),
    "interactivity": ("interactivity", True),
    "ttft": ("ttft_p50_ms", False),
    "cost": ("usd_per_mtok", False),
    "accelerator": ("accelerator", False),
}
PAGE_SIZE = 25
# What a leaderboard row shows, read in the same query that ranks the runs.
BEST_ROW_COLUMNS = (
    "deployment__accelerator_id",
    "deployment__accelerator__sku",
    "deployment__gpus",
    "deployment__engine__name",
    "deployment__engine_version",
    "deployment__quant_weights",
    "deployment__parallelism_label",
    "deployment__spec_method",
    "deployment__engine_flags",
    "best_point__input_tok_s",
    "best_point__output_tok_s",
    "best_point__total_tok_s",
    "best_point__unlabelled_tok_s",
    "scenario__input_tokens",
    "scenario__output_tokens",
    "best_point__interactivity_p50",
    "best_point__ttft_p50_ms",
    "best_point__ttft_p99_ms",
    "best_point__success_rate",
    "measured_at",
)
# Which run a row shows. "latest" keeps regressions visible; "best" is an option.
RUN_RULES = ("latest", "best")
DEFAULT_BEST_DAYS = 30


@dataclass(frozen=True)
class Board:
    model: str | None = None
    scenario: str | None = None
    tier: str = "owning_hyperscaler"
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
            else "only runs that pass the board's rules"
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
    ttft_p50_ms: float | None
    ttft_p99_ms: float | None
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
    def labels_text(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in sorted(self.labels.items()) if k != "unofficial")

    origin: str = ""
    rules_failed: list[dict[str, str]] = field(default_factory=list)

    @property
    def label(self) -> str:
        spec = f" · {self.speculative}" if self.speculative else ""
        # Deployments that differ only in engine flags must still be told apart.
        flags = f" · {self.flags[0][:40]}" if self.flags else ""
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
    deployments = Deployment.objects.filter(runs__in=runs_visible(org=org))
    return list(
        Model.objects.filter(pk__in=deployments.values("model_id"))
        .order_by("name")
        .values_list("name", flat=True)
    )


def widest_views(*, org: Organization | None = None) -> list[tuple[str, str]]:
    """(model, scenario slug) pairs, those whose runs span the most accelerators first: the
    board opens on the first, the view where most hardware can be set side by side. Simulated
    runs never count (they do not rank with measurements)."""
    spans = (
        runs_visible(org=org)
        .exclude(provenance=Run.Provenance.SIMULATED)
        .filter(scenario__isnull=False, best_point__isnull=False)
        .values("deployment__model__name", "scenario__slug", "scenario__is_preset")
        .annotate(accelerators=Count("deployment__accelerator", distinct=True), runs=Count("id"))
        .order_by(
            "-accelerators",
            "-scenario__is_preset",
            "-runs",
            "deployment__model__name",
            "scenario__slug",
        )
    )
    return [(row["deployment__model__name"], row["scenario__slug"]) for row in spans]


@dataclass(frozen=True)
class Pair:
    """Two leaderboard rows set side by side like for like, and what still differs."""

    a: Row
    b: Row
    differs: list[str]


def like_for_like_pairs(
    *, org: Organization | None, model: str, scenario: str, skus: tuple[str, str]
) -> list[Pair]:
    """Per weight precision both accelerators have, the fastest row of each with that model
    and scenario, preferring pairs that also share serving (aggregated or not) and engine:
    the comparison that leaves the fewest differences to explain. Most rows first."""
    # Evidence for a published claim, read beside it: checked or not, each side says its
    # origin and, where it fails the board's rules, "not checked" (story.html).
    board = Board(model=model, scenario=scenario, accelerators=skus, include_unchecked=True)
    page = leaderboard_rows(board=board, org=org)
    serving = dict(
        Deployment.objects.filter(pk__in=[r.deployment_id for r in page.ranked]).values_list(
            "pk", "disaggregated"
        )
    )
    firsts, seconds = (
        [r for r in page.ranked if r.accelerator == sku and r.tput_per_gpu] for sku in skus
    )
    best: dict[str, tuple[tuple, Pair]] = {}
    for a in firsts:
        for b in seconds:
            if a.quantization != b.quantization:
                continue
            differs = [
                name
                for name, same in (
                    ("serving", serving[a.deployment_id] == serving[b.deployment_id]),
                    ("engine", a.engine == b.engine),
                    ("parallelism", a.parallelism == b.parallelism),
                    ("speculative decoding", a.speculative == b.speculative),
                )
                if not same
            ]
            score = (
                "serving" not in differs,
                "engine" not in differs,
                -len(differs),
                min(a.tput_per_gpu, b.tput_per_gpu),
            )
            held = best.get(a.quantization)
            if held is None or score > held[0]:
                best[a.quantization] = (score, Pair(a=a, b=b, differs=differs))
    rows = Counter(r.quantization for r in firsts + seconds)
    return [pair for quant, (_, pair) in sorted(best.items(), key=lambda kv: -rows[kv[0]])]


def published_runs(*, model: str, org: Organization | None) -> list[Run]:
    """The published-figure runs of a model, for a story to link."""
    return list(
        runs_visible(org=org)
        .filter(deployment__model__name=model, provenance=Run.Provenance.PUBLISHED)
        .select_related("deployment__accelerator")
        .order_by("id")
    )


def measured_runs_count(*, model: str, sku: str, org: Organization | None) -> int:
    """Runs of a model on an accelerator that someone measured or imported (not a cited
    figure, not simulated)."""
    return (
        runs_visible(org=org)
        .filter(deployment__model__name__iexact=model, deployment__accelerator__sku__iexact=sku)
        .filter(provenance__in=(Run.Provenance.MEASURED, Run.Provenance.IMPORTED))
        .count()
    )


def imported_sources(*, run_ids: list[int]) -> list[dict[str, Any]]:
    """Which tools' files or APIs the given runs were imported from, how many, and the date
    of the latest measurement: the board says "imported from X, as of <date>"."""
    return list(
        Run.objects.filter(pk__in=run_ids, provenance=Run.Provenance.IMPORTED)
        .exclude(source_tool="")
        .values("source_tool")
        .annotate(runs=Count("id"), as_of=Max(Coalesce("started_at", "created_at")))
        .order_by("-runs")
    )


def scenarios_with_runs(*, org: Organization | None = None) -> QuerySet[Scenario]:
    ids = runs_visible(org=org).values("scenario_id")
    return Scenario.objects.filter(pk__in=ids)


def price_tiers() -> list[str]:
    return sorted(set(PriceTier.objects.filter(org__isnull=True).values_list("tier", flat=True)))


def _slo_text(scenario: Scenario | None) -> str:
    return scenario_slo(scenario).describe()


def _runs_for(board: Board, org: Organization | None):
    filters = RunFilters(
        model=board.model,
        accelerator=board.accelerator,
        quantization=board.quantization,
        scenario=board.scenario,  # an unknown slug matches nothing, not everything
    )
    runs = runs_narrowed(
        runs_filtered(org=org, filters=filters),
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


def _row_runs(runs, board: Board) -> list[dict[str, Any]]:
    """Per deployment, the run the board's rule picks (Board.rule_text says which).

    "latest" picks among every run with points, so a latest run without a rankable point
    (every level client-bound or off its prompt length) hides the row rather than letting
    an older run stand in for it."""
    # A run is dated by when it was measured where its document says, else when it landed
    # (an imported history lands all at once, measured over months).
    runs = runs.annotate(measured_at=Coalesce("started_at", "created_at"))
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
    columns = (
        "id",
        "deployment_id",
        "provenance",
        "origin",
        "rules_passed",
        "rules_failed",
        "is_public",
        "best_meets_slo",
        "best_point",
        "labels",
        *BEST_ROW_COLUMNS,
    )
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
            run__deployment_id__in=deployment_ids, run__in=runs_visible(org=org)
        )
        .order_by("run__deployment_id", "-run__created_at")
        .values("run__deployment_id", "task", "metric", "score", "ci_low", "ci_high", "n")
    )
    for result in results:
        latest.setdefault(result["run__deployment_id"], result)
    return latest


def reference_prices(tier: str, own: tuple[tuple[str, float], ...] = ()) -> dict[int, float]:
    """accelerator id -> $/GPU-hr for a reference tier, with the visitor's own prices
    (apps.costs.prices.price_sheet: their organization's profile, the URL's) on top."""
    prices = PriceTier.objects.filter(org__isnull=True, tier=tier)
    found = dict(prices.values_list("accelerator_id", "usd_per_gpu_hour"))
    return found | prices_by_accelerator_id(dict(own))


def reference_price_book() -> dict[str, dict[str, float]]:
    """SKU -> tier -> $/GPU-hr, reference tiers only."""
    book: dict[str, dict[str, float]] = {}
    rows = PriceTier.objects.filter(org__isnull=True).values_list(
        "accelerator__sku", "tier", "usd_per_gpu_hour"
    )
    for sku, tier, price in rows:
        book.setdefault(sku, {})[tier] = price
    return book


def leaderboard_rows(*, board: Board, org: Organization | None = None) -> BoardPage:
    # By slug from the URL: only a scenario the caller may see (another organization's
    # scenario name and SLO must not show for a guessed slug).
    visible = scenario_list(org=org)
    scenario = visible.filter(slug=board.scenario).first() if board.scenario else None
    best, unchecked = _checked(_row_runs(_runs_for(board, org), board), board)
    prices = reference_prices(board.tier, board.own_prices)
    accuracy = _accuracy_by_deployment([b["deployment_id"] for b in best], org)
    rows = []
    for b in best:
        d = {
            k.removeprefix("deployment__"): v for k, v in b.items() if k.startswith("deployment__")
        }
        p = {
            k.removeprefix("best_point__"): v for k, v in b.items() if k.startswith("best_point__")
        }
        price = prices.get(d["accelerator_id"])
        priced = priced_throughput(
            TokenKind(board.basis),
            gpus=d["gpus"],
            usd_per_gpu_hour=price,
            input_tok_s=p["input_tok_s"],
            output_tok_s=p["output_tok_s"],
            total_tok_s=p["total_tok_s"],
            unlabelled_tok_s=p["unlabelled_tok_s"],
            input_tokens=b["scenario__input_tokens"],
            output_tokens=b["scenario__output_tokens"],
        )
        rows.append(
            Row(
                deployment_id=b["deployment_id"],
                run_id=b["id"],
                accelerator=d["accelerator__sku"],
                gpus=d["gpus"],
                engine=d["engine__name"],
                engine_version=d["engine_version"],
                quantization=d["quant_weights"],
                parallelism=d["parallelism_label"],
                speculative=d["spec_method"],
                flags=d["engine_flags"],
                provenance=b["provenance"],
                origin=b["origin"],
                rules_failed=b["rules_failed"],
                private=not b["is_public"],
                labels=b.get("labels") or {},
                tput_per_gpu=priced.tok_per_s_per_gpu,
                tput_kind=board.basis if priced.stated else "unstated",
                meets_slo=None
                if b["best_meets_slo"] in (None, UNVERIFIED)
                else b["best_meets_slo"] == MEETS,
                interactivity=p["interactivity_p50"],
                ttft_p50_ms=p["ttft_p50_ms"],
                ttft_p99_ms=p["ttft_p99_ms"],
                success_rate=p["success_rate"],
                usd_per_gpu_hour=price,
                usd_per_mtok=priced.usd_per_mtok,
                accuracy=accuracy.get(b["deployment_id"]),
                run_date=b["measured_at"],
                basis=board.basis,
                tput_range=(priced.tok_low, priced.tok_high) if not priced.stated else None,
                usd_range=(priced.usd_low, priced.usd_high)
                if not priced.stated and priced.usd_low is not None
                else None,
            )
        )
    key, descending = SORTS.get(board.sort, SORTS["throughput"])
    present = [r for r in rows if getattr(r, key) is not None]
    missing = [r for r in rows if getattr(r, key) is None]
    present.sort(key=lambda r: getattr(r, key), reverse=descending)
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
        tiers=price_tiers(),
    )


def chart_points(
    *,
    run_ids: list[int],
    tier: str,
    basis: str = TokenKind.OUTPUT.value,
    own: tuple[tuple[str, float], ...] = (),
) -> list[dict[str, Any]]:
    """Every point of the given runs (the leaderboard's rows), for Pareto charts, priced the
    way the rows are (a figure of unstated kind at its lower reading, and labelled so)."""
    prices = reference_prices(tier, own)
    rows = Point.objects.filter(run_id__in=run_ids).values(
        "run_id",
        "run__deployment_id",
        "run__deployment__accelerator__sku",
        "run__deployment__accelerator_id",
        "run__deployment__accelerator__all_in_kw",
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
            input_tok_s=row["input_tok_s"],
            output_tok_s=row["output_tok_s"],
            total_tok_s=row["total_tok_s"],
            unlabelled_tok_s=row["unlabelled_tok_s"],
            input_tokens=row["run__scenario__input_tokens"],
            output_tokens=row["run__scenario__output_tokens"],
        )
        tput, kw = priced.tok_per_s_per_gpu, row["accelerator__all_in_kw"]
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


REGRESSION_DROP = 0.10
BASELINE_RUNS = 3


def deployment_get(*, deployment_id: int, org: Organization | None = None) -> Deployment | None:
    """The deployment if the caller can see at least one of its runs."""
    visible = runs_visible(org=org).filter(deployment_id=deployment_id)
    if not visible.exists():
        return None
    return Deployment.objects.select_related("model", "accelerator", "engine").get(pk=deployment_id)


def deployment_history(*, deployment: Deployment, org: Organization | None = None) -> list[dict]:
    """Each visible run's best throughput per GPU, oldest first, with regressions marked.

    A regression is a drop of more than REGRESSION_DROP below the median of the previous
    BASELINE_RUNS runs of the same deployment in the same scenario.
    """
    runs = (
        runs_visible(org=org)
        .filter(deployment=deployment)
        .select_related("scenario", "best_point")
        .annotate(measured_at=Coalesce("started_at", "created_at"))
        .order_by("measured_at", "id")
    )
    history, by_scenario = [], {}
    for run in runs:
        # The run's leaderboard point (apps/runs/summary.py), as the board shows it.
        per_gpu = run.best_tput_per_gpu
        previous = by_scenario.setdefault(run.scenario_id, [])
        window = sorted(previous[-BASELINE_RUNS:])
        baseline = window[len(window) // 2] if window else None
        regression = bool(
            per_gpu is not None and baseline and per_gpu < (1 - REGRESSION_DROP) * baseline
        )
        if per_gpu is not None:
            previous.append(per_gpu)
        point, scenario = run.best_point, run.scenario
        # A figure of unstated kind reads as the board reads it: both readings, flagged.
        unstated = (
            priced_throughput(
                TokenKind.OUTPUT,
                gpus=deployment.gpus,
                usd_per_gpu_hour=None,
                unlabelled_tok_s=point.unlabelled_tok_s,
                input_tokens=scenario.input_tokens if scenario else None,
                output_tokens=scenario.output_tokens if scenario else None,
            )
            if point is not None
            and point.unlabelled_tok_s is not None
            and point.output_tok_s is None
            and point.total_tok_s is None
            else None
        )
        history.append(
            {
                "run_id": run.pk,
                "when": run.measured_at.isoformat(),
                "scenario": run.scenario.name if run.scenario else "—",
                "provenance": run.provenance,
                "engine_version": deployment.engine_version or "—",
                "tput_per_gpu": per_gpu,
                "tput_range": (unstated.tok_low, unstated.tok_high)
                if unstated and unstated.tok_low is not None
                else None,
                "tput_kind": "unstated" if unstated else "output",
                "baseline": baseline,
                "regression": regression,
            }
        )
    return history


def run_latency_series(*, run: Run, limit: int = 5000) -> dict[str, list[float]]:
    """TTFT and E2EL of successful requests, one series per load level (levels are not
    one population: mixing them draws a distribution no user saw). Each level is evenly
    thinned to `limit` values for the chart."""
    series: dict[str, list[float]] = {}
    for point in run.points.order_by("ordinal"):
        level = point.label or (
            f"c={point.concurrency}"
            if point.concurrency
            else f"{point.request_rate:g} req/s"
            if point.request_rate
            else f"#{point.ordinal}"
        )
        records = RequestRecord.objects.filter(point=point, status="ok")
        step = max(1, -(-records.count() // limit))
        ttfts: list[float] = []
        e2els: list[float] = []
        for index, (ttft, e2el) in enumerate(
            records.order_by("i").values_list("ttft_ms", "e2el_ms")
        ):
            if index % step:
                continue
            if ttft is not None:
                ttfts.append(ttft)
            if e2el is not None:
                e2els.append(e2el)
        if ttfts:
            series[f"TTFT {level} (ms)"] = ttfts
        if e2els:
            series[f"E2EL {level} (ms)"] = e2els
    return series


def run_in_flight(*, run: Run, ordinals: list[int], samples: int = 200) -> dict[int, dict]:
    """The client's requests in flight over each level's window, from the stored request
    records (send, and send + E2EL), sampled at `samples` evenly spaced seconds from the
    level's start: the same origin as the server's series, so the two line up."""
    spans: dict[int, tuple[list[float], list[float]]] = {o: ([], []) for o in ordinals}
    rows = RequestRecord.objects.filter(point__run=run, point__ordinal__in=ordinals)
    for ordinal, send, e2el in rows.values_list("point__ordinal", "t_send_ms", "e2el_ms"):
        # A request without an end was never answered in full: it has no known span.
        if e2el is not None:
            spans[ordinal][0].append(send)
            spans[ordinal][1].append(send + e2el)
    timelines = {}
    for ordinal, (sends, ends) in spans.items():
        if not sends:
            continue
        sends.sort()
        ends.sort()
        last = ends[-1]
        times = [last * i / (samples - 1) for i in range(samples)]
        timelines[ordinal] = {
            "t_s": [t / 1000 for t in times],
            # Sent at or before t, minus ended at or before t.
            "in_flight": [bisect_right(sends, t) - bisect_right(ends, t) for t in times],
        }
    return timelines


def runs_speculation(*, run_ids: list[int]) -> dict[int, dict[str, Any]]:
    """Per run, what speculative decoding did at its leaderboard point: the acceptance the
    document stored (from the server, or llama.cpp's per-request draft counts) and the
    client's tokens per streamed chunk, the fallback when the server reports nothing."""
    found = {}
    for run_id, ordinal, per_chunk in Run.objects.filter(
        pk__in=run_ids, best_point__isnull=False
    ).values_list("pk", "best_point__ordinal", "best_point__tokens_per_chunk"):
        # Only the one point's entry of the stored document, not the whole document.
        acceptance = (
            Run.objects.filter(pk=run_id)
            .values_list(f"document__points__{ordinal}__speculative_acceptance", flat=True)
            .first()
        )
        found[run_id] = {"acceptance": acceptance, "tokens_per_chunk": per_chunk}
    return found


def run_leaderboard_point(
    *, run: Run, tier: str, basis: str, own: tuple[tuple[str, float], ...] = ()
) -> dict[str, Any] | None:
    """The run's leaderboard point, its verdict by the one SLO rule, and its tok/s and $/Mtok
    under a basis and tier: the same figures the leaderboard and /compare/ show."""
    point = run.best_point
    if point is None:
        return None
    slo = scenario_slo(run.scenario)
    figures = summary.run_figures(
        list(Point.objects.filter(pk=point.pk).values("id", *summary.FIGURE_FIELDS)),
        run.document,
    )[0]
    gpus = run.deployment.gpus
    price = reference_prices(tier, own).get(run.deployment.accelerator_id)
    priced = priced_throughput(
        TokenKind(basis),
        gpus=gpus,
        usd_per_gpu_hour=price,
        input_tok_s=point.input_tok_s,
        output_tok_s=point.output_tok_s,
        total_tok_s=point.total_tok_s,
        unlabelled_tok_s=point.unlabelled_tok_s,
        input_tokens=run.scenario.input_tokens if run.scenario else None,
        output_tokens=run.scenario.output_tokens if run.scenario else None,
    )
    return {
        "point": point,
        "verdict": summary.point_verdict(figures, slo).describe() if slo.any else "no SLO",
        "priced": priced,
        "usd_per_gpu_hour": price,
        "tier": tier,
        "basis": basis,
    }


def point_verdicts(*, run: Run) -> dict[int, str]:
    """point id -> the one SLO rule's verdict on it, for the run page's table."""
    slo = scenario_slo(run.scenario)
    if not slo.any:
        return {}
    rows = list(run.points.values("id", *summary.FIGURE_FIELDS))
    return {
        f.point_id: summary.point_verdict(f, slo).status.replace("_", " ")
        for f in summary.run_figures(rows, run.document)
    }


def run_errors(*, run: Run) -> dict[str, int]:
    totals: dict[str, int] = {}
    for errors in run.points.values_list("errors", flat=True):
        for kind, count in (errors or {}).items():
            totals[kind] = totals.get(kind, 0) + count
    return totals


def run_point_marks(*, run: Run) -> dict[int, list[str]]:
    """Why a point of this run cannot stand for its scenario, by ordinal, as its document
    says: its client was saturated, or its prompts missed their input length."""
    marks: dict[int, list[str]] = {}
    for ordinal, data in enumerate((run.document or {}).get("points") or []):
        found = []
        if data.get("client_bound"):
            found.append("client-bound")
        if data.get("prompt_length_mismatch_rate"):
            found.append("prompt length mismatch")
        if found:
            marks[ordinal] = found
    return marks


def deployment_facts(deployment: Deployment) -> dict[str, str]:
    quant = deployment.quant_weights
    if deployment.quant_activations or deployment.quant_kv_cache:
        quant += (
            f" (act {deployment.quant_activations or '?'}, kv {deployment.quant_kv_cache or '?'})"
        )
    return {
        "model": deployment.model.name,
        "quantization": quant,
        "engine": deployment.engine.name,
        "engine_version": deployment.engine_version or "unstated",
        "hardware": f"{deployment.gpus}×{deployment.accelerator.sku}",
        "parallelism": deployment.parallelism_label,
        # Named apart from parallelism: one pool serving both, or a pool for each.
        "serving": deployment.serving_label,
        "nodes": {True: "multi-node", False: "one node", None: "unstated"}[deployment.multinode],
        "speculative": deployment.spec_method or "none",
    }


def accuracy_for(*, deployment: Deployment, org: Organization | None = None) -> list[dict]:
    """Latest accuracy result per task for a deployment, with per-item outcomes if stored."""
    results = (
        AccuracyResult.objects.filter(run__in=runs_visible(org=org), run__deployment=deployment)
        .order_by("task", "-run__created_at")
        .prefetch_related("items")
    )
    latest: dict[str, dict] = {}
    for r in results:
        if r.task in latest:
            continue
        items = {i.item_id: bool(i.correct) for i in r.items.all() if i.correct is not None}
        latest[r.task] = {
            "task": r.task,
            "metric": r.metric,
            "score": r.score,
            "n": r.n,
            "ci_low": r.ci_low,
            "ci_high": r.ci_high,
            "protocol_hash": r.protocol_hash,
            "items": items or None,
            "run_id": r.run_id,
            "result_id": r.pk,
        }
    return list(latest.values())


def deployment_choices(*, org: Organization | None = None) -> list[tuple[int, str]]:
    """Every deployment with a visible run, labelled for a picker (the id tells apart two
    deployments that differ only in what the label leaves out)."""
    ids = runs_visible(org=org).order_by().values_list("deployment_id", flat=True).distinct()
    deployments = Deployment.objects.filter(pk__in=ids).select_related(
        "model", "accelerator", "engine"
    )
    return sorted(
        (
            (
                d.pk,
                f"{d.model.name}: {d.gpus}×{d.accelerator.sku} {d.engine.name} "
                f"{d.engine_version or ''} {d.quant_weights} {d.parallelism_label or ''} "
                f"(#{d.pk})".replace("  ", " "),
            )
            for d in deployments
        ),
        key=lambda choice: choice[1],
    )
