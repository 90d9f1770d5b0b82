"""Reads for accuracy: stored results as documents, paired comparisons, quantization trades."""

from collections import Counter
from dataclasses import dataclass
from typing import Any

from django.db.models import Max, QuerySet

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


def interval(result: AccuracyResult) -> tuple[float, float] | None:
    if result.ci_low is not None and result.ci_high is not None:
        return result.ci_low, result.ci_high
    if result.n:
        wilson = wilson_fraction(result.score, result.n)
        return wilson.low, wilson.high
    return None


def quantization_trade(
    *, model: str, accelerator: str, task: str, org: Organization | None = None
) -> list[dict[str, Any]]:
    """Accuracy delta vs throughput gain for each quantization of one model on one accelerator.

    The baseline is the highest-precision variant present. Throughput is each deployment's
    best tok/s/GPU at the SLO in the scenario most of them were measured in.
    """
    results = accuracy_results(org=org).filter(
        task=task,
        run__deployment__model__name=model,
        run__deployment__accelerator__sku__iexact=accelerator,
    )
    latest: dict[int, AccuracyResult] = {}
    for result in results:
        latest.setdefault(result.run.deployment_id, result)
    if len(latest) < 2:
        return []
    runs = runs_visible(org=org).filter(deployment_id__in=latest, best_tput_per_gpu__isnull=False)
    scenario = Counter(runs.values_list("scenario_id", flat=True)).most_common(1)
    # Without a throughput run the accuracy side still stands (published evaluations often
    # score a deployment that was never load-tested): its throughput column says so.
    tput = (
        dict(
            runs.filter(scenario_id=scenario[0][0])
            .values("deployment_id")
            .annotate(best=Max("best_tput_per_gpu"))
            .values_list("deployment_id", "best")
        )
        if scenario
        else {}
    )

    def precision_rank(result: AccuracyResult) -> int:
        quant = result.run.deployment.quant_weights.upper()
        return PRECISION_ORDER.index(quant) if quant in PRECISION_ORDER else len(PRECISION_ORDER)

    ordered = sorted(latest.values(), key=precision_rank)
    base = ordered[0]
    base_tput = tput.get(base.run.deployment_id)
    trade = []
    for result in ordered:
        deployment_tput = tput.get(result.run.deployment_id)
        low_high = interval(result)
        base_interval = interval(base)
        trade.append(
            {
                "quantization": result.run.deployment.quant_weights,
                "result_id": result.pk,
                "score": result.score,
                "accuracy_delta_points": 100 * (result.score - base.score),
                # Half-widths of each side's interval, combined: a rough error bar only.
                "error_points": 100
                * (
                    ((low_high[1] - low_high[0]) / 2) ** 2
                    + ((base_interval[1] - base_interval[0]) / 2) ** 2
                )
                ** 0.5
                if low_high and base_interval and result is not base
                else 0.0,
                "throughput_gain_pct": 100 * (deployment_tput / base_tput - 1)
                if deployment_tput and base_tput
                else None,
                "baseline": base.run.deployment.quant_weights,
                # Paired needs per-item outcomes on both sides; sources that publish only a
                # score and n (InferenceX's evaluations) compare unpaired.
                "paired": result.items.exists() and base.items.exists()
                if result is not base
                else None,
            }
        )
    return trade
