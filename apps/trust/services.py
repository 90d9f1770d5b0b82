"""Writes for the board's trust: rule checks stored on runs, and the staff review queue."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from apps.accounts.services import audit_record
from apps.accuracy.models import AccuracyResult
from apps.errors import FieldRefused
from apps.runs import summary
from apps.runs.models import Point, Run
from apps.trust import rules
from apps.trust.models import Review
from workers.accuracy.stats import wilson_fraction


def _accuracy_facts(run: Run) -> list[rules.AccuracyFact]:
    # The latest result per protocol and task on this deployment, among results the run's
    # audience may see (public ones, and its own organization's).
    found = _accuracy_facts_of([run.deployment_id], _visible_beside(run))
    return found[run.deployment_id]


def _accuracy_facts_of(deployments, visible: Q) -> dict[int, list[rules.AccuracyFact]]:
    """_accuracy_facts for several deployments (one audience) in one query."""
    results = (
        AccuracyResult.objects.filter(deployment_id__in=deployments)
        .filter(visible)
        .order_by("deployment_id", "protocol", "task", "-run__created_at", "-id")
        .values_list("deployment_id", "protocol", "task", "score", "ci_high", "n")
    )
    latest: dict[int, dict[tuple[str, str], rules.AccuracyFact]] = {d: {} for d in deployments}
    for deployment_id, protocol, task, score, ci_high, n in results:
        if ci_high is None and n and 0 <= score <= 1:
            # A result that states its sample size but not its interval: Wilson's, as the
            # accuracy pages compute it (workers/accuracy/stats.py).
            ci_high = wilson_fraction(score, n).high
        fact = rules.AccuracyFact(protocol, task, score, ci_high)
        latest[deployment_id].setdefault((protocol, task), fact)
    return {d: list(facts.values()) for d, facts in latest.items()}


def _visible_beside(run: Run):
    """The results a run's rules may read: what everyone who sees the run sees. A public run
    never passes on a private score its visitors cannot check; a private one may use its
    organization's own."""
    visible = Q(run__is_public=True)
    if not run.is_public and run.org_id is not None:
        visible |= Q(run__org_id=run.org_id)
    return visible


def _reference(run: Run) -> dict[tuple[str, str], float]:
    by_model = _reference_scores([run.deployment.model_id], _visible_beside(run))
    return _best_beside(by_model.get(run.deployment.model_id, {}), run.deployment_id)


def _reference_scores(models, visible: Q) -> dict[int, dict[int, dict[tuple[str, str], float]]]:
    """model -> deployment -> (protocol, task) -> best score, over the results at a reference
    precision that `visible` lets a run read, for several models in one query."""
    results = (
        AccuracyResult.objects.filter(run__deployment__model_id__in=models)
        .filter(visible)
        .values_list(
            "run__deployment__model_id",
            "run__deployment_id",
            "protocol",
            "task",
            "score",
            "run__document__deployment",
        )
    )
    found: dict[int, dict[int, dict[tuple[str, str], float]]] = {}
    for model_id, deployment_id, protocol, task, score, deployment in results:
        if deployment and not rules.is_quantized(deployment):
            best = found.setdefault(model_id, {}).setdefault(deployment_id, {})
            best[(protocol, task)] = max(score, best.get((protocol, task), score))
    return found


def _best_beside(
    by_deployment: dict[int, dict[tuple[str, str], float]], deployment_id: int
) -> dict[tuple[str, str], float]:
    """The best reference score per (protocol, task) on the model's other deployments."""
    best: dict[tuple[str, str], float] = {}
    for other, scores in by_deployment.items():
        if other != deployment_id:
            for key, score in scores.items():
                best[key] = max(score, best.get(key, score))
    return best


def _scope(run: Run) -> str:
    return "public" if run.is_public else f"org:{run.org_id}"


def _accuracy_prefetch(runs: list[Run], memo: dict) -> None:
    """Fill `memo` with what rule_input would look up one run at a time for the quantized
    runs of a batch: a query per audience for their deployments' accuracy facts, and one for
    their models' reference scores, instead of two per deployment."""
    audiences: dict[str, list[Run]] = {}
    for run in runs:
        if rules.is_quantized((run.document or {}).get("deployment") or {}):
            audiences.setdefault(_scope(run), []).append(run)
    for scope, members in audiences.items():
        visible = _visible_beside(members[0])
        deployments = {r.deployment_id for r in members} - {
            key[1] for key in memo if key[0] == "accuracy" and key[2] == scope
        }
        if deployments:
            for deployment_id, facts in _accuracy_facts_of(sorted(deployments), visible).items():
                memo[("accuracy", deployment_id, scope)] = facts
        wanted = {
            (r.deployment.model_id, r.deployment_id)
            for r in members
            if ("reference", r.deployment.model_id, r.deployment_id, scope) not in memo
        }
        if wanted:
            by_model = _reference_scores(sorted({m for m, _ in wanted}), visible)
            for model_id, deployment_id in wanted:
                best = _best_beside(by_model.get(model_id, {}), deployment_id)
                memo[("reference", model_id, deployment_id, scope)] = best


def rule_input(
    run: Run, memo: dict | None = None, points: list[dict] | None = None
) -> rules.RuleInput:
    """What the rules read for `run`. `memo` shares the accuracy look-ups across a batch of
    runs (one per deployment and audience, one per model and audience); `points`, the run's
    `values("id", *FIGURE_FIELDS)` rows where the batch has read them already."""
    memo = {} if memo is None else memo
    if points is None:
        points = list(run.points.values("id", *summary.FIGURE_FIELDS))
    figures = summary.run_figures(points, run.document)
    deployment = (run.document or {}).get("deployment") or {}
    quantized = rules.is_quantized(deployment)
    scope = _scope(run)
    accuracy = reference = None
    if quantized:
        key: tuple[Any, ...] = ("accuracy", run.deployment_id, scope)
        accuracy = memo[key] if key in memo else memo.setdefault(key, _accuracy_facts(run))
        key = ("reference", run.deployment.model_id, run.deployment_id, scope)
        reference = memo[key] if key in memo else memo.setdefault(key, _reference(run))
    return rules.RuleInput(
        deployment=deployment,
        points=figures,
        best_point_id=run.best_point_id,
        min_success_rate=summary.scenario_slo(run.scenario).min_success_rate,
        accuracy=accuracy or [],
        reference=reference or {},
        origin=run.origin,
        image=stated_image(run.document),
        stopped_early=(run.document or {}).get("stopped_early"),
        audit_codes=tuple(r.get("code", "") for r in run.audit_reasons or []),
    )


def stated_image(document: dict | None) -> str | None:
    """The one image a run states beside its deployment: an InferenceX run's tag
    (`environment.extra.inferencex.image`; a list when its rows name several, which is none)."""
    extra = ((document or {}).get("environment") or {}).get("extra") or {}
    image = (extra.get("inferencex") or {}).get("image")
    return image if isinstance(image, str) and image else None


def run_rules_refresh(*, run: Run, memo: dict | None = None) -> list[rules.Failure]:
    """Check the board's rules for one run and store the outcome on it."""
    failures = rules.check(rule_input(run, memo))
    run.rules_failed = [f.as_json() for f in failures]
    run.rules_passed = not failures
    Run.objects.filter(pk=run.pk).update(
        rules_failed=run.rules_failed, rules_passed=run.rules_passed
    )
    return failures


REFRESH_BATCH = 500


def runs_rules_refresh(*, runs) -> int:
    """Check again every run of `runs` (after an accuracy result changed what they read).

    In batches: one query for a batch's points and one update of the runs whose outcome
    changed. A deployment's runs are all checked again whenever one of them brings an
    accuracy result, so two queries a run made every ingestion grow with the deployment's
    history (bench/api_load.py's POSTs waited seconds for a pooled connection)."""
    count = 0
    memo: dict[tuple[Any, ...], Any] = {}
    batch: list[Run] = []
    for run in runs.select_related("deployment", "scenario").iterator(chunk_size=REFRESH_BATCH):
        batch.append(run)
        if len(batch) == REFRESH_BATCH:
            count += _rules_refresh_batch(batch, memo)
            batch = []
    return count + _rules_refresh_batch(batch, memo)


def _rules_refresh_batch(runs: list[Run], memo: dict) -> int:
    points: dict[int, list[dict]] = {run.pk: [] for run in runs}
    rows = Point.objects.filter(run_id__in=points).order_by("run_id", "ordinal", "id")
    for row in rows.values("run_id", "id", *summary.FIGURE_FIELDS):
        points[row.pop("run_id")].append(row)
    _accuracy_prefetch(runs, memo)
    changed = []
    for run in runs:
        failures = rules.check(rule_input(run, memo, points[run.pk]))
        outcome = ([f.as_json() for f in failures], not failures)
        if (run.rules_failed, run.rules_passed) != outcome:
            run.rules_failed, run.rules_passed = outcome
            changed.append(run)
    Run.objects.bulk_update(changed, ["rules_failed", "rules_passed"], batch_size=REFRESH_BATCH)
    return len(runs)


def run_rules_after_ingest(*, run: Run) -> None:
    """A landed run's own check, and those of the runs its accuracy results can change: the
    same deployment's (an accuracy result now exists), and, when it was measured at a
    reference precision, the same model's quantized deployments that rank (their floor)."""
    run_rules_refresh(run=run)
    if not run.accuracy_results.exists():
        return
    deployment = (run.document or {}).get("deployment") or {}
    models = [] if rules.is_quantized(deployment) else [run.deployment.model_id]
    affected = _affected_by_accuracy([run.deployment_id], models)
    runs_rules_refresh(runs=affected.exclude(pk=run.pk).distinct())


def _affected_by_accuracy(deployments: list[int], models: list[int]):
    """The runs whose rules read accuracy results landed on `deployments`, those of `models`
    measured at a reference precision among them: the deployments' own runs, and the models'
    quantized deployments' runs that rank (the reference is their floor)."""
    affected = Run.objects.filter(deployment_id__in=deployments)
    if models:
        quantized = (
            Run.objects.filter(deployment__model_id__in=models, best_point__isnull=False)
            .exclude(deployment_id__in=deployments)
            .filter(
                ~Q(deployment__quant_weights__in=rules.REFERENCE_PRECISIONS)
                | ~Q(deployment__quant_activations__in=[*rules.REFERENCE_PRECISIONS, ""])
                | ~Q(deployment__quant_kv_cache__in=[*rules.REFERENCE_PRECISIONS, ""])
            )
        )
        affected = affected | quantized
    return affected


def run_rules_on_settle(sender: object, *, run: Run, others: bool, **_: object) -> None:
    """apps.runs.signals.run_settled: the run's rules again, and with `others` those of the
    runs its accuracy results can change."""
    if others:
        run_rules_after_ingest(run=run)
    else:
        run_rules_refresh(run=run)


def runs_rules_on_settle(
    sender: object, *, runs: list[int], others: list[int], **_: object
) -> None:
    """apps.runs.signals.runs_settled: a batch's runs checked once, after all of it landed.

    The runs checked are those run_rules_on_settle would have checked for each run of the
    batch: the batch's own, and for each of `others` that brought accuracy results the runs
    those results can change (_affected_by_accuracy). Checked against the batch's final data,
    each gets the outcome of its last per-run check: what a check reads of a run (its
    deployment's accuracy results, the reference scores of its model) changes only when a
    run with accuracy results lands, and each such landing had every run it can change
    checked again (tests/apps/trust/test_batched_rules.py compares both on the snapshot)."""
    ids = set(runs)
    bringing = Run.objects.filter(pk__in=others, accuracy_results__isnull=False).values_list(
        "deployment_id", "deployment__model_id", "document__deployment"
    )
    deployments, models = set(), set()
    for deployment_id, model_id, deployment in bringing:
        deployments.add(deployment_id)
        if not rules.is_quantized(deployment or {}):
            models.add(model_id)
    if deployments:
        affected = _affected_by_accuracy(sorted(deployments), sorted(models))
        ids.update(affected.values_list("pk", flat=True))
    runs_rules_refresh(runs=Run.objects.filter(pk__in=sorted(ids)))


# The review queue --------------------------------------------------------------------------


class ReviewError(FieldRefused):
    """A review step refused as asked (the run's page answers 400 with "field: message")."""


def review_propose(*, run: Run, actor: str) -> Review:
    """Propose a public run for the official board (its organization's admin does this)."""
    if not run.is_public:
        raise ReviewError("run", "only a published run can be proposed for the official board")
    with transaction.atomic():
        review, _ = Review.objects.select_for_update().get_or_create(run=run)
        review.status = Review.Status.PROPOSED
        review.reason = ""
        review.proposed_by = actor[:300]
        review.proposed_at = timezone.now()
        review.decided_by = ""
        review.decided_at = None
        review.save()
        # Proposed again: an earlier approval no longer stands (apps/runs/sweeps.py).
        from apps.runs.services import runs_version_bump

        transaction.on_commit(runs_version_bump)
        audit_record(org=run.org, actor=actor, action="review.proposed", target=f"run {run.pk}")
    return review


def review_decide(*, review: Review, approve: bool, reason: str, actor: str) -> Review:
    """Staff's decision, with a reason the submitter sees. Approving needs passing rules."""
    reason = reason.strip()
    if not reason:
        raise ReviewError("reason", "a decision needs a reason the submitter can read")
    with transaction.atomic():
        review = Review.objects.select_for_update().select_related("run").get(pk=review.pk)
        if review.status != Review.Status.PROPOSED:
            raise ReviewError("review", f"this review is already {review.status}")
        if approve and not review.run.rules_passed:
            raise ReviewError("approve", "the run fails the board's rules: it cannot be approved")
        review.status = Review.Status.APPROVED if approve else Review.Status.REJECTED
        review.reason = reason[:2000]
        review.decided_by = actor[:300]
        review.decided_at = timezone.now()
        review.save()
        audit_record(
            org=review.run.org,
            actor=actor,
            action="review.approved" if approve else "review.rejected",
            target=f"run {review.run_id}",
            reason=review.reason,
        )
        from apps.runs.services import runs_version_bump

        transaction.on_commit(runs_version_bump)
    return review
