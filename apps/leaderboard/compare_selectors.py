"""Reads behind /compare/: the deployments to pick from, the scenario they share, the
scenarios and accuracy results of the compared runs, and the one answer (apps/costs/answer.py)
for which points are compared and their ratios.
"""

from collections import Counter

from django.db.models import QuerySet

from apps.accounts.models import Organization
from apps.accuracy.models import AccuracyResult
from apps.catalog.labels import deployment_names
from apps.catalog.models import Deployment, Scenario
from apps.costs.answer import Facts
from apps.costs.answer_selectors import Asked, Asking, ask
from apps.costs.formulas import TokenKind
from apps.runs.selectors import deployments_with_runs, run_spans, scenario_ids_with_runs


def deployment_choices(*, org: Organization | None = None) -> list[tuple[int, str]]:
    """Every deployment with a visible run, labelled for a picker (the id tells apart two
    deployments that differ only in what the label leaves out)."""
    # The run tally on PostgreSQL (apps.runs.selectors.deployments_with_runs), not every run.
    deployments = deployments_with_runs(org=org).select_related("model", "accelerator", "engine")
    names = deployment_names(deployments)
    return sorted(names.items(), key=lambda choice: choice[1])


def common_scenario(*, deployment_ids: list[int], org: Organization | None) -> str | None:
    """The scenario most of the deployments have a visible run in."""
    counts = Counter(
        run_spans(org=org, deployment_ids=deployment_ids)
        .values_list("scenario__slug", "deployment_id")
        .distinct()
    )
    per_scenario = Counter(slug for slug, _ in counts)
    return per_scenario.most_common(1)[0][0] if per_scenario else None


def scenarios_of(*, deployments: list[Deployment], org: Organization | None) -> QuerySet[Scenario]:
    """Only scenarios of runs the viewer may see: a private run's scenario name stays private."""
    ids = scenario_ids_with_runs(org=org, deployment_ids=[d.pk for d in deployments])
    return Scenario.objects.filter(pk__in=ids)


def accuracy_results(*, result_ids: list[int]) -> dict[int, AccuracyResult]:
    """The stored accuracy results by id, for a paired comparison."""
    return AccuracyResult.objects.in_bulk(result_ids)


def compare_answers(
    *,
    deployment_ids: list[int],
    scenario: str,
    slo_tier: str | None,
    bounds: dict[str, float | str | None],
    basis: str,
    tier: str,
    own_prices: dict[str, float],
    org: Organization | None,
    metrics: tuple[str, ...] = (),
    prices_as_of: str = "",
) -> list[Asking]:
    """Each later column against the first, as the one answer gives it (apps/costs/answer.py)
    at the SLO tier `slo_tier` (None: the default) with `bounds` set over it: side A the
    column's deployment, side B the first's, so each ratio reads "this column over the
    first". Raises CostInputError when the scenario or the SLO cannot be asked."""
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
                slo_tier=slo_tier,
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
