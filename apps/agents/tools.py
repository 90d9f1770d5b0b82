"""The MCP server's tools: the product's questions, each a thin call of the service or selector
the page and the REST API use, as the caller (apps/agents/registry.py).

Adding a tool is one function here: `@tool(...)`, a signature (or `arguments=` an API schema),
a docstring an assistant reads, and a result model with its `citation`.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Annotated, Any
from urllib.parse import urlencode

from django.http import HttpRequest, QueryDict
from ninja.errors import AuthenticationError
from pydantic import Field

from apps.agents.registry import Caller, Refused, tool
from apps.agents.schemas import (
    AnswerQuestion,
    AnswerResult,
    BoardArguments,
    BoardResult,
    CostsArguments,
    CostsResult,
    RunResult,
    RunSearchResult,
    SubmitArguments,
    SubmitResult,
)
from apps.agents.selectors import citation
from apps.costs.answer_selectors import Asking, ask
from apps.costs.api.answer import asking_out
from apps.costs.api.runs import procurement_answer
from apps.costs.prices import LINK_ONLY, PRICE_PREFIX, org_price_sheet, profile_prices, url_prices
from apps.leaderboard.selectors import leaderboard_rows
from apps.leaderboard.views.board import board_from_query, board_query
from apps.leaderboard.views.common import board_table
from apps.runs.api import (
    RunDetail,
    RunQuery,
    RunSummary,
    run_detail,
    run_submit,
    visible_run,
)
from apps.runs.selectors import run_summaries

# Run ids are PostgreSQL bigints: a larger number names no run (and the API says so too).
RUN_ID = Annotated[int, Field(ge=1, le=2**63 - 1, description="the run's id")]
# The filters /runs/ narrows by; the API's others narrow only the tool's (and the API's) list.
RUN_PAGE_FILTERS = ("provenance", "accelerator", "engine", "quantization")


@tool(title="Which accelerator, like for like", arguments=AnswerQuestion)
def answer(caller: Caller, question: AnswerQuestion) -> AnswerResult:
    """The like-for-like answer: for a model and scenario, each accelerator's best measured
    point meeting every bound of the SLO among configurations with the asked facts
    (precision, engine, speculative decoding, serving), the tok/s/GPU and $/Mtok ratios with
    their 95% interval, what still differs, the rule applied and the swing over the
    interactivity floor. The same question, names and defaults as GET
    /api/v1/compare/answer; a side with no point meeting the SLO names its nearest point."""
    prices = _price_params(question.prices)
    own = profile_prices(caller.org)[1] | url_prices(prices)
    asking = ask(question.asked(own), org=caller.org, with_swing=question.swing)
    asked = question.model_dump(by_alias=True, exclude={"prices"}, exclude_none=True)
    query = urlencode({**asked, **prices})
    return AnswerResult(
        answer=asking_out(asking),
        citation=citation(
            caller,
            page=f"/answer/?{query}",
            api=f"/api/v1/compare/answer?{query}",
            run_ids=_answer_runs(asking),
        ),
    )


@tool(title="The leaderboard", arguments=BoardArguments)
def board(caller: Caller, asked: BoardArguments) -> BoardResult:
    """A scenario's leaderboard for a model: one row per deployment, ranked (throughput per
    GPU at the scenario's SLO by default; rows missing the SLO last), with each row's
    latency, success, accuracy, $/GPU-hour and $/Mtok, run, date and origin: the board page's
    rows. A value left out is the page's default (the widest model and scenario)."""
    params = _board_params(asked)
    request = HttpRequest()
    request.GET = QueryDict(urlencode(params, doseq=True))
    query = board_query(request, caller.org)
    problems = query.problems()
    if problems:
        raise Refused(422, [{"path": p["field"], "message": p["message"]} for p in problems])
    shown = board_from_query(query, caller.org)
    sheet = org_price_sheet(caller.org, request.GET)
    shown = replace(shown, own_prices=sheet.pairs(), price_profile=sheet.profile)
    page = leaderboard_rows(board=shown, org=caller.org)
    # The page as asked, with the model and scenario it settled on, so the link keeps them.
    link = urlencode({**params, "model": shown.model or "", "scenario": shown.scenario or ""}, True)
    return BoardResult(
        model=shown.model,
        scenario=shown.scenario,
        slo=page.slo_text,
        rule=page.rule_text,
        origins=page.origin_text,
        total=page.total,
        page=page.page,
        pages=page.pages,
        rows=board_table(page.rows),
        citation=citation(
            caller,
            page=f"/?{link}",
            api=f"/?{link}&format=json",
            run_ids=[row.run_id for row in page.rows],
        ),
    )


@tool(title="One run")
def run(caller: Caller, run_id: RUN_ID) -> RunResult:
    """One run with its points (every load level's throughput, latency percentiles,
    interactivity and success), deployment facts, accuracy results and provenance: GET
    /api/v1/runs/{run_id}. A run that does not exist or is not yours to see is not found."""
    return RunResult(
        run=RunDetail.model_validate(run_detail(visible_run(org=caller.org, run_id=run_id))),
        citation=citation(
            caller, page=f"/runs/{run_id}/", api=f"/api/v1/runs/{run_id}", run_ids=[run_id]
        ),
    )


@tool(title="Find runs", arguments=RunQuery)
def search_runs(caller: Caller, query: RunQuery) -> RunSearchResult:
    """Runs by model, accelerator, engine, quantization, scenario, provenance, origin or
    deployment, newest first, a page at a time: GET /api/v1/runs. Each item's id is what the
    `run` tool reads."""
    count, items = run_summaries(
        org=caller.org, filters=query.filters(), offset=query.offset, limit=query.page_size
    )
    asked = query.model_dump(mode="json", exclude_none=True)
    on_page = {name: value for name, value in asked.items() if name in RUN_PAGE_FILTERS}
    beyond = sorted(set(asked) - set(on_page) - {"limit", "offset"})
    return RunSearchResult(
        count=count,
        limit=query.page_size,
        offset=query.offset,
        items=[RunSummary.model_validate(item) for item in items],
        note=f"the page does not narrow by {', '.join(beyond)}" if beyond else "",
        citation=citation(
            caller,
            page=f"/runs/?{urlencode(on_page)}",
            api=f"/api/v1/runs?{urlencode(asked)}",
            run_ids=[item["id"] for item in items],
        ),
    )


@tool(title="GPUs and $/month at an SLO", arguments=CostsArguments)
def costs(caller: Caller, asked: CostsArguments) -> CostsResult:
    """What a workload costs on each measured deployment of a model at an SLO: the
    throughput per GPU meeting the SLO, GPUs and nodes needed, $/month and $/Mtok, cheapest
    first, each with the price it used: the /costs/ page's table (GET
    /api/v1/costs/procurement). A value left out is the page's default."""
    given = asked.model_dump(exclude={"prices", "limit"}, exclude_none=True)
    params = {name: _typed(value) for name, value in given.items()} | _price_params(asked.prices)
    status, body = procurement_answer(params, org=caller.org)
    if status != 200:
        raise Refused(status, body["detail"])
    rows = body["rows"]
    # The page at the state the rows were priced with, its prices alone (not the opener's).
    state = {name: value for name, value in body["state"].items() if value not in ("", None)}
    link = urlencode([*state.items(), LINK_ONLY])
    return CostsResult(
        state=body["state"],
        price_profile=body["price_profile"],
        rows_total=len(rows),
        rows=rows[: asked.limit],
        citation=citation(
            caller,
            page=f"/costs/?{link}",
            api=f"/api/v1/costs/procurement?{urlencode(params)}",
            run_ids=[row["run_id"] for row in rows[: asked.limit]],
        ),
    )


@tool(title="Submit a result document", arguments=SubmitArguments, writes=True)
def submit_run(caller: Caller, asked: SubmitArguments) -> SubmitResult:
    """Store an inferboard.run/v1 result document as a run of your token's organization:
    POST /api/v1/runs, with its scopes, limits and errors. Needs an API token with the write
    scope (Authorization: Bearer, or INFERBOARD_TOKEN over stdio). Public unless visibility
    is private; the same idempotency_key twice stores one run."""
    if caller.token is None:  # registry.may_write refused it already; said for the reader
        raise AuthenticationError()
    status, body = run_submit(
        token=caller.token,
        document=json.dumps(asked.document).encode(),
        visibility=asked.visibility,
    )
    return SubmitResult(
        **body,
        citation=citation(caller, page=body["page"], api=body["url"], run_ids=[body["id"]]),
    )


def _price_params(prices: dict[str, float]) -> dict[str, str]:
    """Own prices as the pages and the API take them: price_<SKU>=<$/GPU-hour>."""
    return {f"{PRICE_PREFIX}{sku}": f"{price:g}" for sku, price in prices.items()}


def _typed(value: object) -> str:
    """A number as a person types it in the page's form: 500000, not 500000.0 (the page
    echoes its state, and its permalink should read as the page's own)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _answer_runs(asking: Asking) -> list[int]:
    """The runs whose figures the answer states: each side's point, the upper point of an
    interpolated reading, and the nearest point of a side that meets nothing."""
    sides = (asking.answer.a, asking.answer.b)
    points = [p for side in sides for p in (side.point, side.upper, side.nearest) if p]
    return [point.run_id for point in points]


def _board_params(asked: BoardArguments) -> dict[str, Any]:
    """The board's query string for what was asked: only the values given."""
    flags = {"unchecked", "official"}
    params: dict[str, Any] = {}
    for name, value in asked.model_dump(mode="json", exclude={"prices"}).items():
        if name in flags:
            if value:
                params[name] = "1"
        elif value not in (None, []):
            params[name] = value
    return params | _price_params(asked.prices)
