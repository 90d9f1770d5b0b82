"""/answer/: the one like-for-like answer (apps/costs/answer.py) as a page, with its swing.

Parse the question (the API's query schema, so the page and `GET /api/v1/compare/answer`
read the same parameters), ask the one service, render the page or its partial."""

from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from pydantic import ValidationError

from apps.accounts.scoping import viewer_org
from apps.costs.answer import STATED_LATENCY
from apps.costs.answer_selectors import DEFAULT_FLOOR, DEFAULT_QUESTION, ask
from apps.costs.api.answer import AnswerQuery
from apps.costs.formulas import CostInputError
from apps.costs.prices import price_sheet
from apps.htmx import page_or_partial
from apps.leaderboard import charts

# The headline's question when the link names no SLO (DEFAULT_QUESTION): the default
# interactivity floor, and no other bound.
DEFAULT_SLO_TEXT = f"interactivity p50 ≥ {DEFAULT_FLOOR:g} tok/s/user"


def answer_query(params: dict[str, str]) -> str:
    """The link that opens the answer page on a question (the headline, the story)."""
    return urlencode({**DEFAULT_QUESTION, **params})


def answer_page(request: HttpRequest) -> HttpResponse:
    params = {k: v for k, v in request.GET.items() if v != ""}
    asked = {**DEFAULT_QUESTION, **params}
    context: dict[str, Any] = {
        "asked": asked,
        "default_slo": DEFAULT_SLO_TEXT,
        "stated_latency": STATED_LATENCY,
    }
    status = 200
    try:
        query = AnswerQuery(**asked)
        asking = ask(query.asked(price_sheet(request).own), org=viewer_org(request))
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
                crossover=asking.swing.crossover,
            ),
            api_query=urlencode(asked),
        )
    response = page_or_partial(request, "leaderboard/answer.html", "answer", context)
    response.status_code = status
    return response
