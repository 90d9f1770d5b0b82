"""The MCP tools' arguments and results: where a page or the REST API already has a schema for
the question (the answer's, the run list's, a run's), it is that schema; the rest are here.

Every result carries a `citation`: the page that shows the same figures, the API call that
gives them, and each figure's origin and date, so an assistant can say where a number is from.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any, Literal

from ninja import Field
from pydantic import BaseModel

from apps.costs.api.answer import AnswerQuery
from apps.runs.api import RunCreated, RunDetail, RunSummary

PRICES_HELP = "own $/GPU-hour by accelerator SKU over the tier's (the API's price_<SKU>)"


class FigureSource(BaseModel):
    """Where the figures of one run come from."""

    run_id: int
    page: str = Field(description="the run's page")
    origin: str = Field(description="who measured it: scheduled, submitted, imported, published")
    provenance: str = Field(description="measured, imported, published or simulated")
    source: str = Field(description="the tool or publication it was read from, if any")
    source_url: str
    measured_at: datetime = Field(description="when it was measured (else when it landed)")


class Citation(BaseModel):
    permalink: str = Field(description="the page showing the same figures")
    api: str = Field(description="the REST API call giving the same figures")
    origins: list[str] = Field(description="the origins of the figures, each once")
    as_of: datetime | None = Field(description="when the newest figure was measured")
    figures: list[FigureSource]


class AnswerQuestion(AnswerQuery):
    """GET /api/v1/compare/answer's question, its names and defaults, with own prices."""

    prices: dict[str, float] = Field(default_factory=dict, description=PRICES_HELP)


class AnswerResult(BaseModel):
    # The API's body as the API builds it (apps/costs/api/answer.asking_out), never a copy
    # that could drift from it: each side's point, origin and rule status, what differs, the
    # ratios with their interval, the rule and the swing over the interactivity floor.
    answer: dict[str, Any] = Field(
        description="GET /api/v1/compare/answer's body for this question, field for field"
    )
    citation: Citation


class BoardArguments(BaseModel):
    """The leaderboard's query: a value left out is the page's default."""

    model: str | None = Field(None, description="a model's name; default: the widest view's")
    scenario: str | None = Field(None, description="a scenario's slug, e.g. 8k-1k")
    tier: str | None = Field(None, description="the price tier, e.g. owning_hyperscaler")
    basis: Literal["output", "input", "total"] | None = Field(None, description="token basis")
    sort: str | None = Field(None, description="throughput, interactivity, ttft, cost, ...")
    rule: Literal["latest", "best"] | None = Field(None, description="which run a row shows")
    days: int | None = Field(None, ge=1, description="rule=best looks back this many days")
    page: int | None = Field(None, ge=1, description="25 rows a page")
    accelerator: list[str] = Field(default_factory=list, description="only these SKUs")
    engine: list[str] = Field(default_factory=list, description="only these engines")
    quantization: list[str] = Field(default_factory=list, description="only these precisions")
    serving: list[str] = Field(default_factory=list, description="aggregated, disaggregated")
    origin: list[str] = Field(default_factory=list, description="only runs of these origins")
    since: date | None = None
    until: date | None = None
    unchecked: bool = Field(False, description="list runs failing the board's rules too")
    official: bool = Field(False, description="only runs the site's staff approved")
    prices: dict[str, float] = Field(default_factory=dict, description=PRICES_HELP)


class BoardResult(BaseModel):
    model: str | None
    scenario: str | None
    slo: str = Field(description="the SLO the rows are judged against")
    rule: str = Field(description="which run each row shows")
    origins: str = Field(description="which origins and rules the board includes")
    total: int = Field(description="rows on every page")
    page: int
    pages: int
    rows: list[dict[str, Any]] = Field(description="the page's JSON download, row for row")
    citation: Citation


class RunResult(BaseModel):
    run: RunDetail = Field(description="GET /api/v1/runs/{id}'s body")
    citation: Citation


class RunSearchResult(BaseModel):
    count: int
    limit: int
    offset: int
    items: list[RunSummary]
    note: str = Field("", description="what the permalink's page does not narrow by")
    citation: Citation


class CostsArguments(BaseModel):
    """The /costs/ page's question (GET /api/v1/costs/procurement's parameters): a value left
    out is the page's default."""

    model: str = Field(description="the model's name, e.g. DeepSeek-R1-0528")
    scenario: str | None = Field(None, description="a scenario's slug; default: every one")
    tier: str | None = Field(None, description="the price tier")
    token_kind: Literal["output", "input", "total"] | None = None
    requests_per_day: float | None = Field(None, gt=0)
    input_tokens: int | None = Field(None, gt=0, description="per request")
    output_tokens: int | None = Field(None, gt=0, description="per request")
    cache_hit_rate: float | None = Field(None, ge=0, le=1)
    peak_to_average: float | None = Field(None, ge=1)
    headroom: float | None = Field(None, ge=0, lt=1)
    gpus_per_node: int | None = Field(None, ge=1)
    ttft_s_max: float | None = Field(None, gt=0, description="TTFT ceiling, seconds")
    ttft_percentile: str | None = None
    interactivity_min: float | None = Field(None, gt=0, description="tok/s/user floor")
    e2el_s_max: float | None = Field(None, gt=0, description="end-to-end latency ceiling, s")
    min_success_pct: float | None = Field(None, ge=0, le=100)
    prices: dict[str, float] = Field(default_factory=dict, description=PRICES_HELP)
    limit: int = Field(20, ge=1, le=200, description="rows returned, cheapest per month first")


class CostsResult(BaseModel):
    state: dict[str, Any] = Field(description="the question as the page reads it, defaults in")
    price_profile: str
    rows_total: int
    rows: list[dict[str, Any]] = Field(description="the page's JSON export, row for row")
    citation: Citation


class SubmitArguments(BaseModel):
    document: dict[str, Any] = Field(
        description="an inferboard.run/v1 result document (the API's ResultDocument schema, "
        "/api/v1/openapi.json)"
    )
    visibility: Literal["public", "private"] | None = Field(
        None, description="private: your token's organization only; default: public"
    )


class SubmitResult(RunCreated):
    """POST /api/v1/runs's body, with where the stored run's figures are shown."""

    citation: Citation
