"""/costs/'s reads: each deployment's latest complete sweep as a curve of the answer's points
(apps/costs/answer_selectors.measured_of), from which the one rule chooses a row's point, and
how many runs it leaves out while they wait for review."""

from dataclasses import replace

from apps.accounts.models import Organization
from apps.catalog.models import Scenario
from apps.costs.answer import Measured
from apps.costs.answer_selectors import answer_deployments, measured_of
from apps.costs.formulas import TokenKind
from apps.costs.procurement import DeploymentCurve
from apps.costs.selectors import CURVES_LIMIT
from apps.runs.models import MEASURED_AT, Run
from apps.runs.selectors import runs_visible
from apps.runs.sweeps import AWAITING_REVIEW, Sweep, sweeps


def awaiting_review_count(*, org: Organization | None, model: str = "") -> int:
    """How many runs /costs/ leaves out, of `model` (blank: all), because they are public
    self-reported runs no reviewer has approved yet (apps/runs/sweeps.py)."""
    if "\x00" in model:  # no name has a NUL byte, and PostgreSQL refuses one
        return 0
    runs = runs_visible(org=org).filter(AWAITING_REVIEW, levels__gt=0, audit_flagged=False)
    return (runs.filter(deployment__model__name=model) if model else runs).count()


def procurement_curves(
    *,
    org: Organization | None,
    kind: TokenKind,
    model: str = "",
    scenario: str = "",
    include_unreviewed: bool = False,
) -> list[DeploymentCurve]:
    """/costs/'s rows: each deployment's latest complete sweep in each scenario (of `model`,
    in `scenario`; blank: all), newest first, at most CURVES_LIMIT, with the answer's points
    of that run, from which the one rule chooses the row's point."""
    if "\x00" in model + scenario:  # no name has a NUL byte, and PostgreSQL refuses one
        return []
    base = (
        runs_visible(org=org)
        .exclude(provenance=Run.Provenance.SIMULATED)
        .exclude(status=Run.Status.FAILED)
        .exclude(labels__has_key="unofficial")
    )
    if model:
        base = base.filter(deployment__model__name=model)
    scenarios = Scenario.objects.filter(pk__in=base.values("scenario_id"))
    if scenario:
        scenarios = scenarios.filter(slug=scenario)
    curves = []
    for found in scenarios:
        swept = sweeps(
            base.filter(scenario=found),
            scenario_id=found.pk,
            include_unreviewed=include_unreviewed,
            deployments=answer_deployments(model=model),
        )
        current = {s.run_id: s for s in swept.values()}
        points: dict[int, list[Measured]] = {}
        runs = Run.objects.filter(pk__in=current)
        waiting = set(runs.filter(AWAITING_REVIEW).values_list("pk", flat=True))
        for point in measured_of(runs, basis=kind, prices={}, current=current):
            points.setdefault(point.run_id, []).append(point)
        for run in runs.select_related("deployment__model").annotate(measured_at=MEASURED_AT):
            own = points.get(run.pk)
            if own:
                curve = _curve(run, found, own, current[run.pk], kind)
                curve = replace(curve, awaiting_review=run.pk in waiting)
                curves.append((run.measured_at, curve))
    curves.sort(key=lambda pair: (pair[0] is not None, pair[0], pair[1].run_id), reverse=True)
    return [curve for _, curve in curves[:CURVES_LIMIT]]


def _curve(
    run: Run, scenario: Scenario, points: list[Measured], sweep: Sweep, kind: TokenKind
) -> DeploymentCurve:
    d, first = run.deployment, points[0]
    return DeploymentCurve(
        run_id=run.pk,
        private=not run.is_public,
        label=first.deployment,
        accelerator=first.accelerator,
        gpus=first.gpus,
        engine=f"{first.engine} {first.engine_version}".strip(),
        quantization=first.precision,
        parallelism=d.parallelism_label,
        scenario=scenario.name,
        input_tokens=scenario.input_tokens,
        output_tokens=scenario.output_tokens,
        cache_hit_rate=scenario.prefix_cache_hit_rate,
        provenance=run.provenance,
        token_kind="unlabelled" if any(not p.basis_stated for p in points) else kind.value,
        points=[p.slo_point() for p in points],
        model=d.model.name,
        prefill_gpus=d.prefill_gpus if d.disaggregated else None,
        decode_gpus=d.decode_gpus if d.disaggregated else None,
        deployment_id=d.pk,
        measured=tuple(points),
        partial=sweep.partial_text(),
        scenario_row=scenario,
    )
