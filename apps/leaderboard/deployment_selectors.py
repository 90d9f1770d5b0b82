"""Reads behind a deployment's page: the deployment, its run history with regressions marked,
its facts and its accuracy results.
"""

from apps.accounts.models import Organization
from apps.accuracy.models import AccuracyResult
from apps.catalog.models import Deployment
from apps.costs.formulas import TokenKind, priced_throughput
from apps.regressions.models import ChangePoint
from apps.regressions.selectors import regressions_of_deployment
from apps.runs.models import MEASURED_AT
from apps.runs.selectors import runs_visible, visible_through


def deployment_get(*, deployment_id: int, org: Organization | None = None) -> Deployment | None:
    """The deployment if the caller can see at least one of its runs."""
    visible = runs_visible(org=org).filter(deployment_id=deployment_id)
    if not visible.exists():
        return None
    return Deployment.objects.select_related("model", "accelerator", "engine").get(pk=deployment_id)


def deployment_history(*, deployment: Deployment, org: Organization | None = None) -> list[dict]:
    """Each visible run's best throughput per GPU, oldest first, with regressions marked.

    A regression is the one definition every page uses: a change point (apps/regressions,
    docs/methodology.md#change-points) in the worse direction that this run begins, as the
    caller may see it. The old "10% below the median of the previous 3 runs" rule is gone.
    """
    begun: dict[int, list[ChangePoint]] = {}
    for change in regressions_of_deployment(deployment_id=deployment.pk, org=org):
        begun.setdefault(change.after_run_id, []).append(change)
    runs = (
        runs_visible(org=org)
        .filter(deployment=deployment)
        .select_related("scenario", "best_point")
        .annotate(measured_at=MEASURED_AT)
        .order_by("measured_at", "id")
    )
    history = []
    for run in runs:
        # The run's leaderboard point (apps/runs/summary.py), as the board shows it.
        per_gpu = run.best_tput_per_gpu
        changes = begun.get(run.pk, [])
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
                "regression": bool(changes),
                "changes": "; ".join(
                    f"{c.metric_label} {c.relative:+.1%} ({c.level})" for c in changes
                ),
            }
        )
    return history


def accuracy_for(*, deployment: Deployment, org: Organization | None = None) -> list[dict]:
    """Latest accuracy result per task for a deployment, with per-item outcomes if stored."""
    results = (
        AccuracyResult.objects.filter(visible_through("run", org=org), deployment=deployment)
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
