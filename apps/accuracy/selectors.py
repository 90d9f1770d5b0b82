"""Reads for accuracy: stored results as documents, paired comparisons, quantization trades."""

from dataclasses import dataclass
from typing import Any

from django.db.models import Count, Max, QuerySet

from apps.accounts.models import Organization
from apps.accounts.scoping import visible_to
from apps.accuracy.models import AccuracyResult
from apps.runs.selectors import runs_visible
from workers import results as doc
from workers.accuracy.compare import NotComparable, compare_results
from workers.accuracy.stats import PairedComparison, wilson_fraction

# Higher precision first: the first one present is the baseline of a quantization trade.
PRECISION_ORDER = ["FP32", "BF16", "FP16", "FP8", "INT8", "MXFP4", "NVFP4", "FP4", "INT4"]


def accuracy_results(*, org: Organization | None = None) -> QuerySet[AccuracyResult]:
    return (
        AccuracyResult.objects.filter(visible_to(org, via="run__"))
        .select_related(
            "run__deployment__model", "run__deployment__accelerator", "run__deployment__engine"
        )
        .order_by("-run__created_at", "task")
    )


def accuracy_result_get(*, result_id: int, org: Organization | None = None):
    return accuracy_results(org=org).filter(pk=result_id).first()


def as_document(result: AccuracyResult) -> doc.AccuracyResult:
    """A stored result in the worker's own shape, so the worker's statistics apply as-is."""
    return doc.AccuracyResult(
        protocol=result.protocol,
        protocol_hash=result.protocol_hash or None,
        task=result.task,
        metric=result.metric,
        n=result.n,
        correct=result.correct,
        score=result.score,
        items=[
            doc.AccuracyItem(
                item_id=item.item_id,
                correct=item.correct,
                failure=item.failure or None,
            )
            for item in result.items.all()
        ]
        or None,
    )


@dataclass(frozen=True)
class PairedView:
    baseline: AccuracyResult
    candidate: AccuracyResult
    comparison: PairedComparison | None
    error: str | None

    @property
    def difference_text(self) -> str:
        return difference_text(self.comparison) if self.comparison else ""


def paired_comparison(
    *,
    baseline: AccuracyResult,
    candidate: AccuracyResult,
    margin_points: float,
    aa: tuple[AccuracyResult, AccuracyResult] | None = None,
) -> PairedView:
    try:
        comparison = compare_results(
            as_document(baseline),
            as_document(candidate),
            margin_points,
            baseline_label=label(baseline),
            candidate_label=label(candidate),
            aa=(as_document(aa[0]), as_document(aa[1])) if aa else None,
        )
    except NotComparable as exc:
        return PairedView(baseline, candidate, None, str(exc))
    return PairedView(baseline, candidate, comparison, None)


DEFAULT_MARGIN_POINTS = 1.5


def difference_text(comparison: PairedComparison) -> str:
    """B minus A with its paired 95% interval, as every page prints it."""
    low, high = comparison.interval.low, comparison.interval.high
    return (
        f"{100 * comparison.difference:+.2f} points, 95% CI [{100 * low:+.2f}, {100 * high:+.2f}]"
        f" (paired on {comparison.n} items, McNemar p = {comparison.mcnemar_p:.3g})"
    )


def label(result: AccuracyResult) -> str:
    d = result.run.deployment
    return f"{d.quant_weights} on {d.gpus}×{d.accelerator.sku} ({d.engine.name})"


@dataclass(frozen=True)
class Evaluation:
    """One evaluation of a run (a task under one protocol) with every metric it scored: a
    GSM8K run's strict and flexible matches are one row, not two that usually agree."""

    result: AccuracyResult  # the first metric's: the one the paired comparison takes
    interval: tuple[float, float] | None
    others: tuple[tuple[AccuracyResult, tuple[float, float] | None], ...]


def evaluations(results: list[AccuracyResult]) -> list[Evaluation]:
    """The results grouped by evaluation, in the order the first of each came."""
    grouped: dict[tuple, list[AccuracyResult]] = {}
    for result in results:
        grouped.setdefault((result.run_id, result.task, result.protocol), []).append(result)
    return [
        Evaluation(first, interval(first), tuple((r, interval(r)) for r in rest))
        for first, *rest in (
            sorted(g, key=lambda r: r.metric != "em_strict") for g in grouped.values()
        )
    ]


def interval(result: AccuracyResult) -> tuple[float, float] | None:
    if result.ci_low is not None and result.ci_high is not None:
        return result.ci_low, result.ci_high
    if result.n:
        wilson = wilson_fraction(result.score, result.n)
        return wilson.low, wilson.high
    return None


def _configuration(deployment) -> tuple:
    """What a deployment is beside its precision: a quantization pair differs in nothing else
    (engine, GPUs, parallelism, speculative decoding, serving, flags but the KV cache's)."""
    return (
        deployment.engine_id,
        deployment.gpus,
        deployment.nodes,
        deployment.tp,
        deployment.ep,
        deployment.dp,
        deployment.pp,
        deployment.dp_attention,
        deployment.spec_method,
        deployment.disaggregated,
        deployment.prefill_layout,
        deployment.decode_layout,
        deployment.prefill_workers,
        deployment.decode_workers,
    )


def _configuration_label(deployment) -> str:
    parts = [deployment.engine.name, f"{deployment.gpus} GPUs"]
    if deployment.parallelism_label:
        parts.append(deployment.parallelism_label)
    parts.append(f"spec {deployment.spec_method}" if deployment.spec_method else "no spec")
    if deployment.disaggregated:
        parts.append("disaggregated")
    return ", ".join(parts)


def _paired_throughput(
    runs: QuerySet, base_id: int, other_id: int
) -> tuple[float, float, str] | None:
    """(base's, other's best tok/s/GPU at the SLO, scenario) in the scenario both deployments
    were load-tested in most often; None when they share none."""
    best = (
        runs.filter(deployment_id__in=(base_id, other_id))
        .values("scenario__slug", "deployment_id")
        .annotate(best=Max("best_tput_per_gpu"), runs=Count("id"))
    )
    by_scenario: dict[str, dict[int, tuple[float, int]]] = {}
    for row in best:
        by_scenario.setdefault(row["scenario__slug"], {})[row["deployment_id"]] = (
            row["best"],
            row["runs"],
        )
    shared = [(slug, sides) for slug, sides in by_scenario.items() if len(sides) == 2]
    if not shared:
        return None
    slug, sides = max(shared, key=lambda item: (sum(r for _, r in item[1].values()), item[0]))
    return sides[base_id][0], sides[other_id][0], slug


def quantization_trade(
    *, model: str, accelerator: str, task: str, org: Organization | None = None
) -> list[dict[str, Any]]:
    """Accuracy delta against throughput gain for each precision of one model on one
    accelerator, beside the highest precision of the same configuration (_configuration): FP4
    against FP8 on the same engine, GPUs, parallelism and speculative method, never against
    another configuration's score. Throughput is each side's best tok/s/GPU at the SLO in the
    scenario both were load-tested in; a side without one says so. A configuration measured at
    one precision only has no pair and is left out."""
    results = accuracy_results(org=org).filter(
        task=task,
        run__deployment__model__name=model,
        run__deployment__accelerator__sku__iexact=accelerator,
    )
    latest: dict[int, AccuracyResult] = {}
    for result in results:
        latest.setdefault(result.run.deployment_id, result)
    groups: dict[tuple, list[AccuracyResult]] = {}
    for result in latest.values():
        groups.setdefault(_configuration(result.run.deployment), []).append(result)
    runs = runs_visible(org=org).filter(best_tput_per_gpu__isnull=False, scenario__isnull=False)

    trade = []
    for members in groups.values():
        ordered = sorted(members, key=lambda r: (_precision_rank(r), -r.run.created_at.timestamp()))
        base = ordered[0]
        others = [r for r in ordered if _precision_rank(r) != _precision_rank(base)]
        for result in others:
            pair = _paired_throughput(runs, base.run.deployment_id, result.run.deployment_id)
            trade.append(_trade_row(result, base, pair))
    return sorted(trade, key=lambda t: (t["throughput_gain_pct"] is None, t["configuration"]))


def _precision_rank(result: AccuracyResult) -> int:
    quant = result.run.deployment.quant_weights.upper()
    return PRECISION_ORDER.index(quant) if quant in PRECISION_ORDER else len(PRECISION_ORDER)


def _trade_row(
    result: AccuracyResult, base: AccuracyResult, pair: tuple[float, float, str] | None
) -> dict[str, Any]:
    """One precision beside its configuration's highest: accuracy delta, throughput gain."""
    low_high, base_interval = interval(result), interval(base)
    return {
        "quantization": result.run.deployment.quant_weights,
        "configuration": _configuration_label(result.run.deployment),
        "result_id": result.pk,
        "baseline_result_id": base.pk,
        "score": result.score,
        "baseline_score": base.score,
        "accuracy_delta_points": 100 * (result.score - base.score),
        # Half-widths of each side's interval, combined: a rough error bar only.
        "error_points": 100
        * (
            ((low_high[1] - low_high[0]) / 2) ** 2
            + ((base_interval[1] - base_interval[0]) / 2) ** 2
        )
        ** 0.5
        if low_high and base_interval
        else 0.0,
        "throughput_gain_pct": 100 * (pair[1] / pair[0] - 1) if pair and pair[0] else None,
        "throughput_ratio": pair[1] / pair[0] if pair and pair[0] else None,
        "scenario": pair[2] if pair else None,
        "baseline": base.run.deployment.quant_weights,
        # Paired needs per-item outcomes on both sides; sources that publish only a score and
        # n (InferenceX's evaluations) compare unpaired.
        "paired": result.items.exists() and base.items.exists(),
    }


def quantization_view(*, org: Organization | None = None) -> tuple[str, str, str] | None:
    """(model, accelerator, task) whose quantization trade has the most pairs with throughput
    on both sides: what /accuracy/ opens on."""
    combos = (
        accuracy_results(org=org)
        .values_list("run__deployment__model__name", "run__deployment__accelerator__sku", "task")
        .annotate(precisions=Count("run__deployment__quant_weights", distinct=True))
        .filter(precisions__gt=1)
        .order_by("run__deployment__model__name", "run__deployment__accelerator__sku", "task")
    )
    best, best_count = None, 0
    for model, accelerator, task, _ in combos:
        trade = quantization_trade(model=model, accelerator=accelerator, task=task, org=org)
        count = sum(t["throughput_gain_pct"] is not None for t in trade)
        if count > best_count:
            best, best_count = (model, accelerator, task), count
    return best
