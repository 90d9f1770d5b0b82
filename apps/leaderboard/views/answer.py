"""/answer/: the one like-for-like answer (apps/costs/answer.py) as a page, with its swing.

Parse the question (the API's query schema, so the page and `GET /api/v1/compare/answer`
read the same parameters, SLO tier and own prices included), ask the one service, render the
page or its partial."""

from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from pydantic import ValidationError

from apps.accounts.scoping import viewer_org
from apps.catalog import slo_tiers
from apps.costs.answer import STATED_LATENCY
from apps.costs.answer_selectors import DEFAULT_QUESTION, DEFAULT_TIER, ask
from apps.costs.api.answer import AnswerQuery
from apps.costs.formulas import CostInputError
from apps.costs.prices import price_inputs, price_sheet
from apps.costs.slo_query import slo_controls
from apps.htmx import page_or_partial
from apps.leaderboard import charts, selectors


def answer_query(params: dict[str, str]) -> str:
    """The link that opens the answer page on a question (the headline, the story)."""
    return urlencode({**DEFAULT_QUESTION, **params})


def answer_page(request: HttpRequest) -> HttpResponse:
    params = {k: v for k, v in request.GET.items() if v != ""}
    asked = {**DEFAULT_QUESTION, **params}
    sheet = price_sheet(request)  # the one price reader: profile, then the link's prices
    context: dict[str, Any] = {
        "asked": asked,
        "stated_latency": STATED_LATENCY,
        "prices": price_inputs(
            request.GET,
            sheet,
            tier=asked.get("tier", DEFAULT_TIER),
            tiers=selectors.price_tiers(),
            skus=[asked.get("a", ""), asked.get("b", "")],
        ),
        "sheet": sheet,
    }
    status = 200
    asking = None
    try:
        query = AnswerQuery(**{k: v for k, v in asked.items() if not k.startswith("price_")})
        asking = ask(query.asked(sheet.own), org=viewer_org(request))
    except ValidationError as exc:
        context["error"] = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        status = 422
    except CostInputError as exc:
        context["error"] = f"{exc.field}: {exc.message}"
        status = 422
    else:
        rows = asking.swing.rows
        context.update(
            asking=asking,
            result=asking.answer,
            swing=asking.swing,
            swing_chart=charts.swing_figure(
                [r.floor for r in rows],
                [r.tok_ratio for r in rows],
                [r.usd_ratio for r in rows],
                a=query.a.upper(),
                b=query.b.upper(),
            ),
            api_query=urlencode(asked),
        )
    context["slo_form"] = slo_controls(
        asked,
        asking.scenario if asking else None,
        asking.slo if asking else None,
    )
    context["tier_names"] = slo_tiers.TIER_NAMES
    response = page_or_partial(request, "leaderboard/answer.html", "answer", context)
    response.status_code = status
    return response
