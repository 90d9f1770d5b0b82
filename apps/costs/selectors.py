"""Reads for the cost model: price books and deployment curves from stored runs.

The only module here that touches the database; everything it returns is a plain
dataclass for the pure functions in formulas / slo / capacity / claims.
"""

from __future__ import annotations

from datetime import date

from django.db.models import Exists, OuterRef, Q

from apps.accounts.models import Organization
from apps.catalog.models import PriceTier
from apps.costs.formulas import AcceleratorPrices, TokenKind, throughputs
from apps.costs.procurement import DeploymentCurve
from apps.costs.reference import REFERENCE_PRICE_SOURCE, PriceSet, reference_book
from apps.costs.slo import SloPoint
from apps.runs.models import Point, Run
from apps.runs.selectors import runs_visible
from apps.runs.summary import scenario_shape
from workers import figures
from workers import slo as slo_rule
from workers.figures import PointView

ORG_PRICE_SOURCE = "your organization's price book"


class PriceBook(dict[str, AcceleratorPrices]):
    """A price book by SKU, with the reference set that priced it (`price_set`)."""

    def __init__(self, entries: dict[str, AcceleratorPrices], price_set: PriceSet) -> None:
        super().__init__(entries)
        self.price_set = price_set


def price_book(
    *, org: Organization | None = None, prices_as_of: str | date | None = None
) -> PriceBook:
    """The one price book every page and the API price with: the reference set in force on
    `prices_as_of` (a date or a set's name; the newest when empty; see apps/costs/reference.py),
    then any reference row an operator stored on this site, then the caller's organization's
    own tiers on top. A `prices_as_of` that names no set is a CostInputError."""
    shipped = reference_book(prices_as_of)
    books = {
        sku: AcceleratorPrices(
            sku=book.sku,
            usd_per_gpu_hour=dict(book.usd_per_gpu_hour),
            all_in_kw=book.all_in_kw,
            sources=dict(book.sources),
            citations=dict(book.citations),
        )
        for sku, book in shipped.prices.items()
    }
    visible = Q(org__isnull=True) | (Q(org=org) if org is not None else Q(pk__in=[]))
    # Reference rows first, so an organization's own price of the same tier wins.
    rows = PriceTier.objects.filter(visible).select_related("accelerator")
    for row in sorted(rows, key=lambda r: (r.org_id is not None, r.accelerator.sku, r.tier)):
        sku = row.accelerator.sku
        book = books.setdefault(
            sku,
            AcceleratorPrices(
                sku=sku, usd_per_gpu_hour={}, all_in_kw=row.accelerator.all_in_kw, sources={}
            ),
        )
        book.usd_per_gpu_hour[row.tier] = row.usd_per_gpu_hour
        private = row.org_id is not None
        book.sources[row.tier] = ORG_PRICE_SOURCE if private else REFERENCE_PRICE_SOURCE
        book.citations[row.tier] = row.source
    return PriceBook(books, shipped.price_set)


def point_metrics(point: Point) -> dict[str, float]:
    """The SLO metrics of a stored point as "ttft_s.p99"-style keys (latencies in seconds),
    read the way workers/slo.py reads them (open loop: TTFT and E2EL from the planned send)."""
    metrics: dict[str, float] = {}
    figures = slo_rule.point_figures(point.latency_ms or {}, point.interactivity or {})
    for metric, dist in figures.items():
        for percentile, value in dist.items():
            if not isinstance(value, int | float):  # the distribution's `method`
                continue
            if metric == "interactivity":
                metrics[f"interactivity.{percentile}"] = value
            else:
                metrics[f"{metric}_s.{percentile}"] = value / 1000.0
    return metrics


def _throughput(
    point: Point, kind: TokenKind, shape: tuple[int | None, int | None]
) -> tuple[float | None, bool]:
    """The point's tok/s of `kind` by the one reading (workers.figures.throughput) and
    whether its kind was unstated: then it is the lower of its two readings through the
    scenario's shape, as the board ranks and prices it (a claim is never read up)."""
    reading = figures.throughput(
        kind.value, **throughputs(point), input_tokens=shape[0], output_tokens=shape[1]
    )
    return reading.value, not reading.stated


# The most runs one cost page prices, newest first: its table and chart stay readable and its
# answer quick. The page says so.
CURVES_LIMIT = 200


def deployment_curves(
    *,
    org: Organization | None,
    kind: TokenKind,
    limit: int | None = None,
    run_id: int | None = None,
    model: str = "",
    scenario: str = "",
) -> list[DeploymentCurve]:
    """Visible succeeded-or-partial runs with their valid points, throughput of `kind` per
    GPU.

    Simulated runs are left out: they never rank with measured ones. So are points the board
    calls invalid (workers.figures.PointView): a cost is never priced from them.
    """
    if "\x00" in model + scenario:  # no name has a NUL byte, and PostgreSQL refuses one
        return []
    runs = runs_visible(org=org)
    if run_id is not None:
        runs = runs.filter(pk=run_id)
    if model:
        runs = runs.filter(deployment__model__name=model)
    if scenario:
        runs = runs.filter(scenario__slug=scenario)
    runs = (
        runs.exclude(provenance=Run.Provenance.SIMULATED)
        .exclude(status=Run.Status.FAILED)
        # Only runs with a load point count against the limit: evaluation-only runs (most of
        # a model's newest ones in the InferenceX history) have nothing to price.
        .filter(Exists(Point.objects.filter(run=OuterRef("pk"))))
        .select_related(
            "deployment__accelerator", "deployment__engine", "deployment__model", "scenario"
        )
        .prefetch_related("points")
        .order_by("-created_at", "-id")[: limit or CURVES_LIMIT]
    )
    curves = (_curve(run, kind) for run in runs)
    return [curve for curve in curves if curve is not None]


def _slo_points(run: Run, kind: TokenKind, gpus: int) -> tuple[list[SloPoint], bool]:
    """A run's valid points priced by `kind` per GPU, and whether any read an unlabelled
    throughput."""
    points = []
    unlabelled = False
    shape = scenario_shape(run.scenario)
    for point in run.points.all():
        # The one validity rule: a client-bound point, or one whose prompts missed their
        # length, never prices. Success is judged by the asked SLO's own floor.
        if PointView.of(point).invalid_reason() is not None:
            continue
        tput, is_unlabelled = _throughput(point, kind, shape)
        if tput is None or tput <= 0:
            continue
        unlabelled = unlabelled or is_unlabelled
        label = point.label or (f"c{point.concurrency}" if point.concurrency else "")
        points.append(
            SloPoint(
                label or f"#{point.ordinal}",
                figures.per_gpu(tput, gpus),
                point_metrics(point),
                success_rate=point.success_rate,
            )
        )
    return points, unlabelled


def _curve(run: Run, kind: TokenKind) -> DeploymentCurve | None:
    """A run's curve, or None when it has no point to price."""
    deployment = run.deployment
    gpus = max(deployment.gpus, 1)
    points, unlabelled = _slo_points(run, kind, gpus)
    if not points:
        return None
    run_scenario = run.scenario
    shape = scenario_shape(run_scenario)
    return DeploymentCurve(
        run_id=run.pk,
        private=not run.is_public,
        label=str(deployment),
        accelerator=deployment.accelerator.sku,
        gpus=gpus,
        engine=f"{deployment.engine} {deployment.engine_version}".strip(),
        quantization=deployment.quant_weights,
        parallelism=deployment.parallelism_label,
        scenario=run_scenario.name if run_scenario else "",
        input_tokens=shape[0],
        output_tokens=shape[1],
        cache_hit_rate=run_scenario.prefix_cache_hit_rate if run_scenario else None,
        provenance=run.provenance,
        token_kind="unlabelled" if unlabelled else kind.value,
        points=points,
        model=deployment.model.name,
        prefill_gpus=deployment.prefill_gpus if deployment.disaggregated else None,
        decode_gpus=deployment.decode_gpus if deployment.disaggregated else None,
    )
