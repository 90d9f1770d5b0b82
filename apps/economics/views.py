"""/economics/{margin,fleet,first-token}/: the economics pages.

Each parses its form through the API's query schema (apps/economics/api.py EconQuery), so a
page and `GET /api/v1/economics/...` read the same names with the same defaults, asks the one
reader (apps/economics/selectors.py) and renders the page or its partial. Bad input is a form
error (422), never a 500.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from pydantic import ValidationError

from apps.accounts.models import Organization
from apps.accounts.scoping import viewer_org
from apps.costs.formulas import CostInputError
from apps.costs.prices import price_sheet
from apps.costs.reference import TIER_LABELS
from apps.costs.slo_query import slo_controls
from apps.economics import charts
from apps.economics import selectors as econ
from apps.economics.api import EconQuery, defaults_out
from apps.htmx import page_or_partial


def _asked(request: HttpRequest) -> dict[str, str]:
    """The form's values (blank ones are missing: the defaults apply); own $/GPU-hr travel
    as price_<SKU> and are read by the one price reader instead."""
    return {k: v for k, v in request.GET.items() if v.strip() != "" and not k.startswith("price_")}


def _page(
    request: HttpRequest,
    template: str,
    fill: Callable[[econ.EconAsk, dict[str, Any]], Any],
) -> HttpResponse:
    asked = _asked(request)
    context: dict[str, Any] = {
        "asked": asked,
        "defaults": defaults_out(),
        "tiers": TIER_LABELS,
        "denominator": econ.DENOMINATOR,
        "api_query": urlencode(asked),
        "errors": [],
    }
    status = 200
    scenario = None
    try:
        query = EconQuery.model_validate(asked)
        question = query.econ_ask(price_sheet(request).own)
        scenario = fill(question, context)
    except ValidationError as exc:
        context["errors"] = [
            (".".join(str(p) for p in e["loc"]) or "form", e["msg"]) for e in exc.errors()
        ]
        status = 422
    except CostInputError as exc:
        context["errors"] = [(exc.field, exc.message)]
        status = 422
    context["slo_form"] = slo_controls(asked, scenario, context.get("asked_slo"))
    response = page_or_partial(request, template, "results", context)
    response.status_code = status
    return response


def _priced(
    question: econ.EconAsk, context: dict[str, Any], *, org: Organization | None
) -> econ.Reading:
    reading = econ.read(question, org=org)
    rows = econ.priced(reading)
    context.update(reading=reading, rows=rows, asked_slo=reading.slo, question=question)
    return reading


def margin(request: HttpRequest) -> HttpResponse:
    org = viewer_org(request)

    def fill(question: econ.EconAsk, context: dict[str, Any]) -> Any:
        reading = _priced(question, context, org=org)
        context["chart"] = charts.margin_figure(context["rows"], tier=reading.tier_label)
        return reading.scenario

    return _page(request, "economics/margin.html", fill)


def fleet(request: HttpRequest) -> HttpResponse:
    org = viewer_org(request)

    def fill(question: econ.EconAsk, context: dict[str, Any]) -> Any:
        reading = _priced(question, context, org=org)
        context["chart"] = charts.fleet_figure(context["rows"], megawatts=question.megawatts)
        return reading.scenario

    return _page(request, "economics/fleet.html", fill)


def first_token(request: HttpRequest) -> HttpResponse:
    org = viewer_org(request)

    def fill(question: econ.EconAsk, context: dict[str, Any]) -> Any:
        found = econ.first_token(question, org=org)
        context.update(
            found=found,
            asked_slo=found.reading_slo,
            question=question,
            chart=charts.first_token_figure(found.caps),
        )
        return found.scenario

    return _page(request, "economics/first_token.html", fill)
