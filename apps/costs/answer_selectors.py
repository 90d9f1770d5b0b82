"""The one read behind the answer (apps/costs/answer.py): every measured point of the two
accelerators for a model and scenario, with its configuration's facts, priced on a basis; and
the same points for the board's rows (measured_of) and /costs/'s (curve_selectors), so
every page chooses its points from one read by one rule.

Imported and published runs take part (with their origin and rule status); simulated and
failed runs do not: they never stand beside a measurement. Nor do runs labelled unofficial
(a branch's trial): they are not the configuration's record.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from django.core.cache import cache
from django.db.models import Exists, F, OuterRef, QuerySet
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Coalesce

from apps.accounts.models import Organization
from apps.catalog import slo_tiers
from apps.catalog.models import Deployment, Scenario
from apps.costs.answer import (
    DEFAULT_MAX_GAP,
    Answer,
    Facts,
    Measured,
    answer,
    by_accelerator,
    by_deployment,
    with_interval,
)
from apps.costs.answer_swing import Swing, swing, verdict_flips
from apps.costs.formulas import (
    THROUGHPUT_FIELDS,
    CostInputError,
    TokenKind,
    priced_throughput,
    throughputs,
)
from apps.costs.odds import Odds, answer_odds, answer_prices
from apps.costs.reference import PriceSet, price_set
from apps.costs.selectors import point_metrics, price_book
from apps.costs.slo_query import AskedSlo, SloAsk
from apps.runs.models import MEASURED_AT, Point, Run, level_name
from apps.runs.selectors import runs_visible, scenario_ids_with_runs
from apps.runs.significance import CACHE_SECONDS, point_samples
from apps.runs.sweeps import Sweep, sweeps
from workers.figures import PointView
from workers.significance import Sample

# The board's default price tier (apps/leaderboard/board_runs.Board.tier).
DEFAULT_TIER = "owning_hyperscaler"
# The default SLO tier's interactivity floor (apps/catalog/slo_tiers.py), for forms that show
# it in a field of their own (the claim checker's).
DEFAULT_FLOOR = slo_tiers.INTERACTIVITY_FLOORS[slo_tiers.DEFAULT_TIER]
# The question a page asks when the visitor names none: the headline's, the claim checker's.
# Its SLO is the scenario's default tier (apps/catalog/slo_tiers.py).
DEFAULT_QUESTION = {
    "model": "DeepSeek-R1-0528",
    "scenario": "8k-1k",
    "precision": "fp4",
    "spec": "none",
    "engine": "any",
    "serving": "any",
    "a": "MI355X",
    "b": "B200",
}


def answer_scenario(*, slug: str, org: Organization | None) -> Scenario | None:
    """The scenario by slug, only if the caller may see a run of it."""
    if "\x00" in slug:
        return None
    return Scenario.objects.filter(slug=slug, pk__in=scenario_ids_with_runs(org=org)).first()


def scenario_rows(*, org: Organization | None, slug: str) -> dict[str, Scenario]:
    """The asked scenario's row by slug (none when blank or unseen), for its SLO tiers."""
    found = answer_scenario(slug=slug, org=org) if slug else None
    return {found.slug: found} if found else {}


def gpu_hour_prices(
    *, org: Organization | None, tier: str, own: Mapping[str, float], prices_as_of: str = ""
) -> dict[str, float]:
    """SKU (upper case) -> $/GPU-hr: the reference tier of the set in force on `prices_as_of`
    (or the organization's own tier), with the visitor's own prices on top, as every money
    page prices."""
    found = {
        sku.upper(): book.usd_per_gpu_hour[tier]
        for sku, book in price_book(org=org, prices_as_of=prices_as_of).items()
        if tier in book.usd_per_gpu_hour
    }
    return found | {sku.upper(): price for sku, price in own.items()}


def answer_deployments(
    *, model: str, skus: tuple[str, ...] = (), deployments: tuple[int, ...] = ()
) -> QuerySet[Deployment]:
    """The deployments an answer asks about (answer_runs's, by their own facts): the bound
    of its walk over runs (apps/runs/sweeps.py), two index probes each, where reading the
    deployments off the runs would scan every run of the model."""
    if deployments:
        return Deployment.objects.filter(pk__in=deployments)
    found = Deployment.objects.all()
    if model:
        found = found.filter(model__name=model)
    if skus:
        found = found.filter(accelerator__sku__in=[s.upper() for s in skus])
    return found


def answer_runs(
    *,
    org: Organization | None,
    model: str,
    scenario: Scenario,
    skus: tuple[str, ...] = (),
    deployments: tuple[int, ...] = (),
) -> QuerySet[Run]:
    """The runs an answer reads: of the accelerators `skus` running `model` (or of the
    `deployments`) in the scenario, neither simulated, failed nor labelled unofficial."""
    runs = runs_visible(org=org).filter(scenario=scenario)
    if deployments or model or skus:
        # A subquery, neither a join to the deployment nor a list of ids: either made the
        # sweep's per-deployment probes sort every run (apps.runs.selectors._on_runs).
        asked = answer_deployments(model=model, skus=skus, deployments=deployments)
        runs = runs.filter(deployment__in=asked)
    return (
        runs.exclude(provenance=Run.Provenance.SIMULATED)
        .exclude(status=Run.Status.FAILED)
        .exclude(labels__has_key="unofficial")
    )


def measured_points(
    runs: QuerySet[Run],
    *,
    scenario: Scenario,
    basis: TokenKind,
    prices: Mapping[str, float],
    deployments: QuerySet[Deployment] | None = None,
) -> list[Measured]:
    """The points the rule chooses from: each configuration's latest complete sweep among
    `runs` (the board's row, apps/runs/sweeps.py), read once per deployment of
    `deployments` (default: those of `runs`) however many runs it has."""
    # A comparison or an answer asked of named deployments reads their runs whether or not a
    # reviewer has approved them (flagged runs never): the wait for review is the default
    # board's and /costs/' (apps/runs/sweeps.py).
    swept = sweeps(runs, scenario_id=scenario.pk, deployments=deployments, include_unreviewed=True)
    current = {s.run_id: s for s in swept.values()}
    return measured_of(
        Run.objects.filter(pk__in=list(current)), basis=basis, prices=prices, current=current
    )


# How many runs of a configuration at its chosen level an answer's interval takes in: the
# chosen one and the newest others. A long history is summarised by its newest runs, which
# describe the configuration as it serves now, and the read stays the same size however many
# runs are stored (bench/pages.py; it read every repeat, ~250 a side at 100,000 runs). Fewer
# repeats can only widen the interval, never narrow it (docs/methodology.md, "Repeats").
MAX_REPEATS = 30


def with_repeats(
    result: Answer, runs: QuerySet[Run], *, scenario: Scenario, basis: TokenKind
) -> Answer:
    """Each side's other runs of its configuration measured at its chosen level (the repeats
    the ratio's interval takes in, the newest MAX_REPEATS - 1), read for that level alone."""
    sides = []
    for side in (result.a, result.b):
        point = side.point
        if point is None or side.reading != "measured" or point.concurrency is None:
            sides.append(side)
            continue
        others = runs.filter(deployment_id=point.deployment_id).exclude(pk=point.run_id)
        repeats = level_repeats(point, others, scenario=scenario, basis=basis)
        sides.append(replace(side, level_runs=(point, *repeats)))
    return replace(result, a=sides[0], b=sides[1])


# What a repeat reads of its point and its run. A long history has hundreds of repeats at a
# level: read as rows, not as runs and points with their configuration joined to each (that
# read grew with the stored runs, bench/pages.py). Every repeat is of the chosen point's
# configuration and scenario, whose facts it shares; its latency figures are not read (the
# interval and the odds resample throughput and request records, never a repeat's metrics).
REPEAT_FIELDS = (
    "pk",
    "run_id",
    "label",
    "concurrency",
    "request_rate",
    "ordinal",
    "success_rate",
    "client_bound",
    "prompt_length_mismatch_rate",
    *THROUGHPUT_FIELDS,
)


def level_repeats(
    point: Measured, runs: QuerySet[Run], *, scenario: Scenario, basis: TokenKind
) -> list[Measured]:
    """The valid points of `runs` (other runs of `point`'s configuration in `scenario`) at
    `point`'s level, as measured_of reads them (their runs' facts, tok/s/GPU and success), with
    the configuration's facts of `point` and no latency metrics: of the newest MAX_REPEATS - 1
    runs measured at its concurrency."""
    at_level = Point.objects.filter(run_id=OuterRef("pk"), concurrency=point.concurrency)
    # The newest first, down runs_run_latest_idx: the walk stops after the cap.
    newest = (
        runs.filter(Exists(at_level))
        .annotate(measured_at=MEASURED_AT)
        .order_by("-measured_at", "-id")
        .values_list("pk", flat=True)[: MAX_REPEATS - 1]
    )
    rows = (
        Point.objects.filter(run_id__in=list(newest), concurrency=point.concurrency)
        .values(
            *REPEAT_FIELDS,
            origin=F("run__origin"),
            provenance=F("run__provenance"),
            rules_passed=F("run__rules_passed"),
            rules_failed=F("run__rules_failed"),
            # MEASURED_AT (apps/runs/models.py) through the point's run.
            measured_at=Coalesce("run__started_at", "run__created_at"),
            image_digest=F("run__deployment__image_digest"),
            run_image=stated_image("run__"),
        )
        .order_by("run_id", "ordinal")
    )
    found = []
    for row in rows:
        level = level_name(row["label"], row["concurrency"], row["request_rate"], row["ordinal"])
        if level != point.level or PointView.of(row).invalid_reason() is not None:
            continue
        tok_s, stated, readings = _per_gpu(row, basis=basis, gpus=point.gpus, scenario=scenario)
        if not tok_s:
            continue
        found.append(
            replace(
                point,
                run_id=row["run_id"],
                point_id=row["pk"],
                image=row["image_digest"] or _one_image(row["run_image"]),
                origin=row["origin"],
                provenance=row["provenance"],
                rules_passed=row["rules_passed"],
                rules_failed=tuple(str(f.get("rule", "")) for f in row["rules_failed"] or []),
                tok_s_per_gpu=tok_s,
                basis_stated=stated,
                tok_s_range=readings,
                metrics={},
                success_rate=row["success_rate"],
                current=False,  # not its configuration's latest complete sweep
                measured_at=row["measured_at"],
                partial="",
            )
        )
    return found


def _per_gpu(
    point: Point | Mapping[str, Any], *, basis: TokenKind, gpus: int, scenario: Scenario | None
) -> tuple[float | None, bool, tuple[float, float] | None]:
    """A point's tok/s/GPU on `basis` over the deployment's `gpus`, whether its token kind is
    stated, and its two readings (low, high) when it is not."""
    priced = priced_throughput(
        basis,
        gpus=gpus,
        usd_per_gpu_hour=None,
        **throughputs(point),
        input_tokens=scenario.input_tokens if scenario else None,
        output_tokens=scenario.output_tokens if scenario else None,
    )
    readings = (
        None
        if priced.stated or priced.tok_low is None or priced.tok_high is None
        else (priced.tok_low, priced.tok_high)
    )
    return priced.tok_per_s_per_gpu, priced.stated, readings


STATED_IMAGE_PATH = "document__environment__extra__inferencex__image"


def stated_image(via: str = "") -> KeyTextTransform:
    """The image tag a run states (STATED_IMAGE_PATH) as text, read in the query: of the run
    itself, or of the run through the relation `via` ("run__" from a point)."""
    field, *keys = STATED_IMAGE_PATH.split("__")
    found: Any = F(via + field)
    for key in keys:
        found = KeyTextTransform(key, found)
    return found


def _one_image(value: str | None) -> str:
    """A run's stated image tag, or "" (none, or a list of several: a JSON array as text)."""
    return value if value and not value.startswith("[") else ""


def measured_of(
    runs: QuerySet[Run],
    *,
    basis: TokenKind,
    prices: Mapping[str, float],
    current: Mapping[int, Sweep] | None = None,
    points: QuerySet[Point] | None = None,
) -> list[Measured]:
    """Every valid point of `runs` as the answer reads it (of `points` only, when given). A
    run in `current` (its configuration's latest complete sweep) is one the rule chooses
    from; with `current` None every run is (the board reads only its rows' runs)."""
    found = list(
        # The image an InferenceX run states (apps.trust.services.stated_image's path), read
        # in the query: the document itself is deferred, one query a run.
        runs.annotate(measured_at=MEASURED_AT, run_image=stated_image())
        .select_related(
            "deployment__accelerator", "deployment__engine", "deployment__model", "scenario"
        )
        .order_by("id")
    )
    # The points in one query, grouped here: prefetch_related clones its queryset once per
    # run, which for hundreds of repeats cost more than reading them.
    of_run: dict[int, list[Point]] = {}
    chosen_points = (Point.objects.all() if points is None else points).filter(
        run_id__in=[run.pk for run in found]
    )
    for point in chosen_points.order_by("run_id", "ordinal"):
        of_run.setdefault(point.run_id, []).append(point)
    out = []
    for run in found:
        d = run.deployment
        scenario = run.scenario
        lengths = f"{scenario.input_tokens}/{scenario.output_tokens}" if scenario else "—"
        sweep = current.get(run.pk) if current is not None else None
        chosen = current is None or sweep is not None
        sku = d.accelerator.sku
        gpus = max(d.gpus, 1)
        for point in of_run.get(run.pk, []):
            if PointView.of(point).invalid_reason() is not None:
                continue  # the one validity rule: never an answer from a point the board refuses
            tok_s, stated, readings = _per_gpu(point, basis=basis, gpus=gpus, scenario=scenario)
            out.append(
                Measured(
                    run_id=run.pk,
                    deployment_id=d.pk,
                    deployment=str(d),
                    accelerator=sku,
                    gpus=gpus,
                    engine=d.engine.name,
                    engine_version=d.engine_version,
                    # The image the run states (an InferenceX row's tag) where the deployment
                    # names none: a configuration's history spans images.
                    image=d.image_digest or _one_image(run.run_image),
                    precision=d.quant_weights,
                    spec=d.spec_method,
                    parallelism=d.parallelism_label or f"{gpus} GPUs",
                    serving="disaggregated" if d.disaggregated else "aggregated",
                    origin=run.origin,
                    provenance=run.provenance,
                    rules_passed=run.rules_passed,
                    rules_failed=tuple(str(f.get("rule", "")) for f in run.rules_failed or []),
                    lengths=lengths,
                    level=point.level_name,
                    concurrency=point.concurrency,
                    tok_s_per_gpu=tok_s,
                    basis_stated=stated,
                    usd_per_gpu_hour=prices.get(sku.upper()),
                    metrics=point_metrics(point),
                    success_rate=point.success_rate,
                    point_id=point.pk,
                    tok_s_range=readings,
                    current=chosen,
                    measured_at=run.measured_at,
                    partial=sweep.partial_text() if sweep else "",
                )
            )
    return out


@dataclass(frozen=True, slots=True)
class Asked:
    """A question as a page or the API asks it, before the data is read."""

    model: str
    scenario: str
    a: str
    b: str
    facts: Facts
    # The bounds set over the SLO tier (Slo.of's keyword arguments; None keeps the tier's,
    # "none" removes it), the tier's name (None: the default tier) and the success floor
    # (None: the tier's), as apps/costs/slo_query.py reads them.
    bounds: Mapping[str, float | str | None] = field(default_factory=dict)
    basis: TokenKind = TokenKind.OUTPUT
    tier: str = DEFAULT_TIER
    own_prices: Mapping[str, float] = field(default_factory=dict)
    min_success_rate: float | None = None
    slo_tier: str | None = None
    interpolate: bool = False
    max_gap: float = DEFAULT_MAX_GAP
    # /compare/'s question: side A and B are these two deployments, not accelerators
    # (`a` and `b` are then "#<id>").
    deployments: tuple[int, int] | None = None
    # The reference price set by date or name (apps/costs/reference.py); "": the newest.
    prices_as_of: str = ""
    # A user's $/GPU-hr range for side A and B (apps/costs/odds.py draws the odds over it).
    price_ranges: tuple[tuple[float, float] | None, tuple[float, float] | None] = (None, None)


@dataclass(frozen=True, slots=True)
class Asking:
    """The answer to an `Asked`, its swing over the interactivity floor and what it read."""

    asked: Asked
    scenario: Scenario
    answer: Answer
    swing: Swing
    points: int
    slo: AskedSlo | None = None
    # P(A is cheaper than B) beside the $/Mtok ratio (apps/costs/odds.py), and the set priced.
    odds: Odds | None = None
    price_set: PriceSet | None = None


def ask(
    asked: Asked,
    *,
    org: Organization | None,
    with_swing: bool = True,
    with_uncertainty: bool = True,
    metrics: tuple[str, ...] = (),
) -> Asking:
    """Read the points and apply the one rule, then the ratio's interval where repeated
    runs or request records allow (`metrics`: more figures to state with an interval, as
    workers/significance.py names them). A scenario the caller may not see, or an SLO that
    cannot be asked for, is a CostInputError naming the field."""
    scenario = answer_scenario(slug=asked.scenario, org=org)
    if scenario is None:
        raise CostInputError("scenario", f"no visible run has scenario {asked.scenario!r}")
    asked_slo = SloAsk(asked.slo_tier, asked.bounds, asked.min_success_rate).resolve(scenario)
    slo = asked_slo.slo
    prices = gpu_hour_prices(
        org=org, tier=asked.tier, own=asked.own_prices, prices_as_of=asked.prices_as_of
    )
    runs = answer_runs(
        org=org,
        model=asked.model,
        scenario=scenario,
        skus=(asked.a, asked.b),
        deployments=asked.deployments or (),
    )
    bound = answer_deployments(
        model=asked.model, skus=(asked.a, asked.b), deployments=asked.deployments or ()
    )
    points = measured_points(
        runs, scenario=scenario, basis=asked.basis, prices=prices, deployments=bound
    )
    side_of: Callable[[Measured], str] = by_deployment if asked.deployments else by_accelerator
    result = answer(
        points,
        a=asked.a,
        b=asked.b,
        facts=asked.facts,
        slo=slo,
        interpolate=asked.interpolate,
        max_gap=asked.max_gap,
        side_of=side_of,
        slo_text=asked_slo.describe(),
    )
    flips = verdict_flips(
        points,
        result,
        a=asked.a,
        b=asked.b,
        interpolate=asked.interpolate,
        max_gap=asked.max_gap,
        side_of=side_of,
    )
    result = replace(result, flips=flips)
    odds: Odds | None = None
    if with_uncertainty:  # the headline names the points only: no interval to read
        result = with_repeats(result, runs, scenario=scenario, basis=asked.basis)
        result, odds = _uncertainty(asked, result, metrics)
    swung = (
        swing(points, a=asked.a, b=asked.b, facts=asked.facts, slo=slo, side_of=side_of)
        if with_swing
        else Swing((), "")
    )
    return Asking(
        asked,
        scenario,
        result,
        swung,
        len(points),
        slo=asked_slo,
        odds=odds,
        price_set=price_set(asked.prices_as_of),
    )


# The interval and the odds resample the repeats at each side's level (up to MAX_REPEATS
# runs a side, each with its request records), re-read and re-drawn on every view. Their
# inputs never change once stored (a point's figures and request records), so they are kept
# by what they read, as the run page's comparisons are (apps/runs/significance.py): a run
# landing at either level, another basis, metric or price is another key.
UNCERTAINTY_CACHE_SECONDS = CACHE_SECONDS


def _uncertainty(
    asked: Asked, result: Answer, metrics: tuple[str, ...]
) -> tuple[Answer, Odds | None]:
    """`result` with the ratio's interval (apps/costs/answer.with_interval), and the odds
    beside its cost ratio (apps/costs/odds.py), kept apart from the rule."""
    prices = answer_prices(
        result,
        tier=asked.tier,
        own=asked.own_prices,
        ranges=asked.price_ranges,
        prices_as_of=asked.prices_as_of,
    )
    a, b = result.a, result.b
    # Everything with_interval and answer_odds read besides the records of the points.
    read = (
        asked.basis.value,
        metrics,
        repr(prices),
        result.usd_ratio is None,
        *(
            (
                side.reading,
                side.point is None,
                side.point.usd_per_gpu_hour if side.point else None,
                tuple((p.point_id, p.gpus, p.tok_s_per_gpu) for p in side.level_runs),
            )
            for side in (a, b)
        ),
    )
    key = "answer-uncertainty:v1:" + hashlib.sha256(repr(read).encode()).hexdigest()
    found = cache.get(key)
    if found is None:
        level_runs = [p.point_id for side in (a, b) for p in side.level_runs]
        samples: Mapping[int, Sample] = point_samples(point_ids=level_runs)
        shown = with_interval(result, samples, basis=asked.basis.value, metrics=metrics)
        odds = answer_odds(shown, samples, prices, basis=asked.basis.value)
        found = (shown.interval, shown.uncertainty, odds)
        cache.set(key, found, UNCERTAINTY_CACHE_SECONDS)
    interval, uncertainty, odds = found
    return replace(result, interval=interval, uncertainty=uncertainty), odds
