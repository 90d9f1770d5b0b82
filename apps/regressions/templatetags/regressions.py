"""Badges where the series appear: `{% regression_badge deployment_id %}` on the board and the
deployment page, `{% run_change_points run.pk %}` on a run's page."""

from __future__ import annotations

from typing import Any

from django import template

from apps.accounts.scoping import viewer_org
from apps.regressions import selectors

register = template.Library()
_CACHE = "_inferboard_regressions_by_deployment"


def _by_deployment(request: Any) -> dict[int, list]:
    """All regressions the caller may see, by deployment, read once per request: a board of
    a hundred rows asks the database once, not a hundred times."""
    found = getattr(request, _CACHE, None)
    if found is None:
        found = selectors.regressions_by_deployment(deployment_ids=None, org=viewer_org(request))
        setattr(request, _CACHE, found)
    return found


@register.inclusion_tag("regressions/badges.html", takes_context=True)
def regression_badge(context: dict[str, Any], deployment_id: int) -> dict[str, Any]:
    request = context.get("request")
    found = _by_deployment(request).get(deployment_id, []) if request is not None else []
    return {"regressions": found, "deployment_id": deployment_id}


@register.inclusion_tag("regressions/run_badges.html", takes_context=True)
def run_change_points(context: dict[str, Any], run_id: int) -> dict[str, Any]:
    request = context.get("request")
    org = viewer_org(request) if request is not None else None
    return {"points": selectors.regressions_of_run(run_id=run_id, org=org)}
