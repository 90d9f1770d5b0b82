"""The one read behind the answer (apps/costs/answer.py): every measured point of the two
accelerators for a model and scenario, with its configuration's facts, priced on a basis.

Imported and published runs take part (with their origin and rule status); simulated and
failed runs do not: they never stand beside a measurement. Nor do runs labelled unofficial
(a branch's trial): they are not the configuration's record.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from apps.accounts.models import Organization
from apps.catalog.models import Scenario
from apps.costs.answer import (
    DEFAULT_MAX_GAP,
    Answer,
    Facts,
    Measured,
    Swing,
    answer,
    by_accelerator,
    by_deployment,
    swing,
    with_interval,
)
from apps.costs.formulas import CostInputError, TokenKind, priced_throughput, throughputs
from apps.costs.odds import Odds, answer_odds, answer_prices
from apps.costs.reference import PriceSet, price_set
from apps.costs.selectors import point_metrics, price_book
from apps.costs.slo import Slo
from apps.runs.models import Run
from apps.runs.selectors import runs_visible
from apps.runs.significance import point_samples
from workers.figures import PointView
from workers.significance import Sample

# The board's default price tier (apps/leaderboard/board_runs.Board.tier).
DEFAULT_TIER = "owning_hyperscaler"
# The interactivity floor a question gets when it names none (the headline's, /compare/'s):
# a floor most chat users feel as fluent streaming, 30 tok/s/user at the median.
DEFAULT_FLOOR = 30.0
# The question a page asks when the visitor names none: the headline's, the claim checker's.
DEFAULT_QUESTION = {
    "model": "DeepSeek-R1-0528",
    "scenario": "8k-1k",
    "precision": "fp4",
    "spec": "none",
    "engine": "any",
    "serving": "any",
    "a": "MI355X",
    "b": "B200",
    "interactivity_min": f"{DEFAULT_FLOOR:g}",
}


def answer_scenario(*, slug: str, org: Organization | None) -> Scenario | None:
    """The scenario by slug, only if the caller may see a run of it."""
    if "\x00" in slug:
        return None
    ids = runs_visible(org=org).values("scenario_id")
    return Scenario.objects.filter(slug=slug, pk__in=ids).first()


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


def measured_points(
    *,
    org: Organization | None,
    model: str,
    scenario: Scenario,
    skus: tuple[str, ...] = (),
    deployments: tuple[int, ...] = (),
    basis: TokenKind,
    prices: Mapping[str, float],
) -> list[Measured]:
    """The points of the accelerators `skus` running `model` (or of the `deployments`)."""
    runs = runs_visible(org=org).filter(scenario=scenario)
    if deployments:
        runs = runs.filter(deployment_id__in=deployments)
    else:
        runs = runs.filter(deployment__model__name=model)
        runs = runs.filter(deployment__accelerator__sku__in=[s.upper() for s in skus])
    runs = (
        runs.exclude(provenance=Run.Provenance.SIMULATED)
        .exclude(status=Run.Status.FAILED)
        .exclude(labels__has_key="unofficial")
        .select_related("deployment__accelerator", "deployment__engine")
        .prefetch_related("points")
        .order_by("id")
    )
    lengths = f"{scenario.input_tokens}/{scenario.output_tokens}"
    out = []
    for run in runs:
        d = run.deployment
        sku = d.accelerator.sku
        gpus = max(d.gpus, 1)
        for point in run.points.all():
            if PointView.of(point).invalid_reason() is not None:
                continue  # the one validity rule: never an answer from a point the board refuses
            priced = priced_throughput(
                basis,
                gpus=gpus,
                usd_per_gpu_hour=None,
                **throughputs(point),
                input_tokens=scenario.input_tokens,
                output_tokens=scenario.output_tokens,
            )
            out.append(
                Measured(
                    run_id=run.pk,
                    deployment_id=d.pk,
                    deployment=str(d),
                    accelerator=sku,
                    gpus=gpus,
                    engine=d.engine.name,
                    engine_version=d.engine_version,
                    image=d.image_digest,
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
                    tok_s_per_gpu=priced.tok_per_s_per_gpu,
                    basis_stated=priced.stated,
                    usd_per_gpu_hour=prices.get(sku.upper()),
                    metrics=point_metrics(point),
                    success_rate=point.success_rate,
                    point_id=point.pk,
                    tok_s_range=None
                    if priced.stated or priced.tok_low is None or priced.tok_high is None
                    else (priced.tok_low, priced.tok_high),
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
    bounds: Mapping[str, float | str | None]  # Slo.of's keyword arguments
    basis: TokenKind = TokenKind.OUTPUT
    tier: str = DEFAULT_TIER
    own_prices: Mapping[str, float] = field(default_factory=dict)
    min_success_rate: float | None = None  # None: none required (imported rows state none)
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
    # P(A is cheaper than B) beside the $/Mtok ratio (apps/costs/odds.py), and the set priced.
    odds: Odds | None = None
    price_set: PriceSet | None = None


def ask(
    asked: Asked,
    *,
    org: Organization | None,
    with_swing: bool = True,
    metrics: tuple[str, ...] = (),
) -> Asking:
    """Read the points and apply the one rule, then the ratio's interval where repeated
    runs or request records allow (`metrics`: more figures to state with an interval, as
    workers/significance.py names them). A scenario the caller may not see, or an SLO that
    cannot be asked for, is a CostInputError naming the field."""
    scenario = answer_scenario(slug=asked.scenario, org=org)
    if scenario is None:
        raise CostInputError("scenario", f"no visible run has scenario {asked.scenario!r}")
    # Unless asked, no success rate is required: imported and published rows do not report
    # one, and the answer must judge them on their latencies (the SLO states it).
    rate = asked.min_success_rate if asked.min_success_rate is not None else 0.0
    # The asked bounds are a dict of Slo.of's keywords; mypy cannot match each value's type.
    slo = Slo.of(**asked.bounds, min_success_rate=rate)  # type: ignore[arg-type]
    prices = gpu_hour_prices(
        org=org, tier=asked.tier, own=asked.own_prices, prices_as_of=asked.prices_as_of
    )
    points = measured_points(
        org=org,
        model=asked.model,
        scenario=scenario,
        skus=(asked.a, asked.b),
        deployments=asked.deployments or (),
        basis=asked.basis,
        prices=prices,
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
    )
    level_runs = [p.point_id for side in (result.a, result.b) for p in side.level_runs]
    samples = point_samples(point_ids=level_runs)
    result = with_interval(result, samples, basis=asked.basis.value, metrics=metrics)
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
        odds=_odds(asked, result, samples),
        price_set=price_set(asked.prices_as_of),
    )


def _odds(asked: Asked, result: Answer, samples: Mapping[int, Sample]) -> Odds | None:
    """The odds beside the answer's cost ratio (apps/costs/odds.py), kept apart from the rule."""
    prices = answer_prices(
        result,
        tier=asked.tier,
        own=asked.own_prices,
        ranges=asked.price_ranges,
        prices_as_of=asked.prices_as_of,
    )
    return answer_odds(result, samples, prices, basis=asked.basis.value)
