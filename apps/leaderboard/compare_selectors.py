"""Reads behind /compare/: the deployments to pick from, the scenario they share, the
scenarios and accuracy results of the compared runs, and the one answer (apps/costs/answer.py)
for which points are compared and their ratios.
"""

from collections import Counter

from django.db.models import QuerySet

from apps.accounts.models import Organization
from apps.accuracy.models import AccuracyResult
from apps.catalog.models import Deployment, Scenario
from apps.costs.answer import Facts, shorthand_ceiling
from apps.costs.answer_selectors import DEFAULT_FLOOR, Asked, Asking, ask
from apps.costs.formulas import TokenKind
from apps.runs.selectors import runs_visible
from apps.runs.summary import scenario_slo


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


def common_scenario(*, deployment_ids: list[int], org: Organization | None) -> str | None:
    """The scenario most of the deployments have a visible run in."""
    counts = Counter(
        runs_visible(org=org)
        .filter(deployment_id__in=deployment_ids, scenario__isnull=False)
        .order_by()
        .values_list("scenario__slug", "deployment_id")
        .distinct()
    )
    per_scenario = Counter(slug for slug, _ in counts)
    return per_scenario.most_common(1)[0][0] if per_scenario else None


def scenarios_of(*, deployments: list[Deployment], org: Organization | None) -> QuerySet[Scenario]:
    """Only scenarios of runs the viewer may see: a private run's scenario name stays private."""
    return Scenario.objects.filter(
        runs__in=runs_visible(org=org).filter(deployment__in=deployments)
    ).distinct()


def accuracy_results(*, result_ids: list[int]) -> dict[int, AccuracyResult]:
    """The stored accuracy results by id, for a paired comparison."""
    return AccuracyResult.objects.in_bulk(result_ids)


def answer_bounds(
    scenario: Scenario | None,
    *,
    interactivity_min: float | str | None,
    latency_ceiling_s: float | str | None,
) -> dict[str, float | str | None]:
    """The SLO /compare/ asks the answer at: the scenario's bounds (the board's SLO), the
    asked shorthand ceiling (apps.costs.answer.STATED_LATENCY, TTFT p99) and floor over them
    ("none": no such bound), and where neither the scenario nor the visitor sets a floor,
    the answer's default one (DEFAULT_FLOOR)."""
    bounds: dict[str, float | str | None] = {}
    for bound in scenario_slo(scenario).bounds:
        if bound.metric == "interactivity":
            bounds |= {"interactivity_min": bound.stored_limit}
            bounds |= {"interactivity_percentile": bound.percentile}
        elif f"{bound.metric}_s_max" not in bounds:  # the answer takes one bound a metric
            bounds |= {f"{bound.metric}_s_max": bound.stored_limit / 1000}
            bounds |= {f"{bound.metric}_percentile": bound.percentile}
    if latency_ceiling_s is not None:
        bounds |= shorthand_ceiling(latency_ceiling_s)
    if interactivity_min is not None:
        bounds |= {"interactivity_min": interactivity_min, "interactivity_percentile": "p50"}
    bounds.setdefault("interactivity_min", DEFAULT_FLOOR)
    return {k: None if v == "none" else v for k, v in bounds.items()}


def compare_answers(
    *,
    deployment_ids: list[int],
    scenario: str,
    bounds: dict[str, float | str | None],
    basis: str,
    tier: str,
    own_prices: dict[str, float],
    org: Organization | None,
    metrics: tuple[str, ...] = (),
    prices_as_of: str = "",
) -> list[Asking]:
    """Each later column against the first, as the one answer gives it (apps/costs/answer.py):
    side A the column's deployment, side B the first's, so each ratio reads "this column
    over the first". Raises CostInputError when the scenario cannot be asked."""
    first, *rest = deployment_ids
    return [
        ask(
            Asked(
                model="",
                scenario=scenario,
                a=f"#{other}",
                b=f"#{first}",
                facts=Facts(),
                bounds=bounds,
                basis=TokenKind(basis),
                tier=tier,
                own_prices=own_prices,
                deployments=(other, first),
                prices_as_of=prices_as_of,
            ),
            org=org,
            with_swing=False,
            metrics=metrics,
        )
        for other in rest
    ]
