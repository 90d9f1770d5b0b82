"""GET /api/v1/economics/{margin,fleet,first-token,tco-feed}: the economics pages' figures.

The query schema (`EconQuery`) is the pages' too (apps/economics/views.py validates their
forms through it), so a page and the API read the same names with the same defaults. Every
figure says its basis, its denominator (all deployed GPUs), its SLO tier and its price set.
"""

from __future__ import annotations

import csv
import io
from typing import Any, Literal

from django.http import HttpRequest, HttpResponse
from ninja import Field, Query, Router

from apps.accounts.auth import optional_org
from apps.api_errors import Errors
from apps.api_params import Share, UsdPerMtok
from apps.costs.answer import Facts, Measured, Side
from apps.costs.answer_selectors import DEFAULT_TIER
from apps.costs.api.answer import price_set_out
from apps.costs.formulas import CostInputError
from apps.costs.prices import price_sheet_of
from apps.costs.reference import PriceSet
from apps.costs.slo_query import SloQuery
from apps.csv_safe import safe_cell
from apps.economics import feed
from apps.economics import selectors as econ
from apps.economics.formulas import Fleet, Margin
from workers import figures

router = Router(tags=["economics"])
# The answer's latency figure, as the registry names it in seconds and as a ceiling.
TTFT = figures.figure(figures.ANSWER_LATENCY)
BASIS = "output tok/s per GPU (input and total beside it), the answer's basis"


class EconQuery(SloQuery):
    """An economics question: model, scenario, facts, SLO (the one SLO query), price tier and
    set, token prices over the shipped list price, and the revenue terms."""

    model: str = Field(econ.DEFAULT_MODEL, min_length=1, max_length=200)
    scenario: str = Field(econ.DEFAULT_SCENARIO, min_length=1, max_length=200)
    precision: str = Field("any", min_length=1, max_length=100)
    spec: str = Field("any", min_length=1, max_length=100)
    engine: str = Field("any", min_length=1, max_length=200)
    serving: Literal["aggregated", "disaggregated", "any"] = "any"
    tier: str = Field(DEFAULT_TIER, min_length=1, max_length=100, description="price tier")
    prices_as_of: str = Field("", max_length=100, description="a date or a price set's name")
    input_price: UsdPerMtok | None = Field(None, description="$ per Mtok of uncached input")
    cached_input_price: UsdPerMtok | None = Field(None, description="$ per Mtok, cached input")
    output_price: UsdPerMtok | None = Field(None, description="$ per Mtok of output")
    utilisation: Share = Field(econ.DEFAULT_UTILISATION, description="share of hours sold")
    licence_share: Share = Field(econ.DEFAULT_LICENCE_SHARE, description="share of revenue")
    cache_hit_rate: Share | None = Field(
        None, description="share of input served from cache (default: measured, else 0)"
    )
    pue: float = Field(1.0, ge=1.0, le=5.0, allow_inf_nan=False, description="PUE over all-in")
    megawatts: float = Field(
        1.0, ge=0.001, le=100_000, allow_inf_nan=False, description="fleet power budget, MW"
    )
    gpus_per_node: int | None = Field(
        None, ge=1, le=1024, description="default: 8 (4 for a GB200/GB300 tray)"
    )

    def econ_ask(self, own_prices: dict[str, float]) -> econ.EconAsk:
        return econ.EconAsk(
            model=self.model.strip(),
            scenario=self.scenario.strip(),
            facts=Facts(self.precision, self.spec, self.engine, self.serving),
            slo=self.slo_ask(),
            price_tier=self.tier.strip(),
            own_prices=own_prices,
            prices_as_of=self.prices_as_of.strip(),
            input_price=self.input_price,
            cached_input_price=self.cached_input_price,
            output_price=self.output_price,
            utilisation=self.utilisation,
            licence_share=self.licence_share,
            cache_hit_rate=self.cache_hit_rate,
            pue=self.pue,
            megawatts=self.megawatts,
            gpus_per_node=self.gpus_per_node,
        )


def asked_of(request: HttpRequest, query: EconQuery) -> econ.EconAsk:
    """The question with the visitor's own $/GPU-hr (their profile, the link's on top)."""
    return query.econ_ask(price_sheet_of(request.GET, optional_org(request)).own)


def defaults_out() -> dict[str, Any]:
    return {
        "utilisation": {"value": econ.DEFAULT_UTILISATION, "why": econ.UTILISATION_WHY},
        "licence_share": {"value": econ.DEFAULT_LICENCE_SHARE, "why": econ.LICENCE_WHY},
        "cache_hit_rate": {"value": econ.DEFAULT_CACHE_HIT_RATE, "why": econ.CACHE_WHY},
        "pue": {"value": 1.0, "why": "the all-in kW per GPU includes the facility's share"},
    }


def point_out(point: Measured | None) -> dict[str, Any] | None:
    if point is None:
        return None
    return {
        "run_id": point.run_id,
        "run_url": f"/runs/{point.run_id}/",
        "deployment_id": point.deployment_id,
        "deployment": point.deployment,
        "serving": point.serving,
        "gpus": point.gpus,
        "origin": point.origin,
        "provenance": point.provenance,
        "measured_at": point.measured_at.isoformat() if point.measured_at else None,
        "level": point.level,
        "concurrency": point.concurrency,
        "interactivity_p50": point.interactivity_p50,
        TTFT.seconds_name: point.metrics.get("ttft_s.p99"),
        "basis_stated": point.basis_stated,
    }


def reading_out(reading: econ.Reading) -> dict[str, Any]:
    tokens = reading.tokens
    listed = tokens.list_price
    return {
        "model": reading.asked.model,
        "scenario": reading.scenario.slug,
        "slo_tier": reading.slo.tier.as_dict(),
        "slo": reading.slo.describe(),
        "price_tier": reading.asked.price_tier,
        "price_set": price_set_out(reading.price_set),
        "basis": BASIS,
        "denominator": econ.DENOMINATOR,
        "token_prices": {
            "input": tokens.prices.input,
            "cached_input": tokens.prices.cached_input,
            "output": tokens.prices.output,
            "described": tokens.describe(),
            "overridden": list(tokens.overridden),
            "list_price": None
            if listed is None
            else {
                "offer": listed.offer,
                "source_url": listed.source_url,
                "read": listed.read,
                "in_force": listed.in_force,
            },
        },
        "terms": {
            "utilisation": reading.asked.utilisation,
            "licence_share": reading.asked.licence_share,
            "cache_hit_rate": reading.asked.cache_hit_rate,
            "pue": reading.asked.pue,
        },
        "defaults": defaults_out(),
    }


def _margin_out(m: Margin | None) -> dict[str, Any] | None:
    if m is None:
        return None
    return {
        "revenue_per_gpu_hour": m.revenue_per_gpu_hour,
        "gross_revenue_per_gpu_hour": m.gross_revenue_per_gpu_hour,
        "cost_per_gpu_hour": m.cost_per_gpu_hour,
        "margin_per_gpu_hour": m.margin_per_gpu_hour,
        "gpu_hours_per_mw_year": m.gpu_hours_per_mw_year,
        "revenue_per_mw_year": m.revenue_per_mw_year,
        "margin_per_mw_year": m.margin_per_mw_year,
    }


def _fleet_out(f: Fleet | None) -> dict[str, Any] | None:
    if f is None:
        return None
    return {
        "gpus": f.gpus,
        "nodes": f.nodes,
        "gpus_per_node": f.gpus_per_node,
        "kw_per_gpu": f.kw_per_gpu,
        "concurrent_users": f.concurrent_users,
        "output_tokens_per_day": f.output_tokens_per_day,
        "input_tokens_per_day": f.input_tokens_per_day,
        "requests_per_day": f.requests_per_day,
        "revenue_per_month": f.revenue_per_month,
        "cost_per_month": f.cost_per_month,
        "margin_per_month": f.margin_per_month,
    }


def row_out(p: econ.Priced, *, with_fleet: bool) -> dict[str, Any]:
    row = p.row
    found = {
        "accelerator": row.sku,
        "vendor": row.vendor,
        "point": point_out(row.point),
        "pools": row.pools,
        "output_tok_s_per_gpu": row.output_tok_s_per_gpu,
        "input_tok_s_per_gpu": row.input_tok_s_per_gpu,
        "total_tok_s_per_gpu": row.total_tok_s_per_gpu,
        "usd_per_gpu_hour": row.usd_per_gpu_hour,
        "price_source": row.price_source,
        "all_in_kw_per_gpu": row.all_in_kw,
        "cache_hit_rate": row.cache_hit_rate,
        "cache_hit_rate_source": row.cache_source,
        "margin": _margin_out(p.margin),
        "why_not": p.why,
    }
    if with_fleet:
        found["fleet"] = _fleet_out(p.fleet)
    return found


@router.get(
    "/margin",
    response={200: dict[str, Any], 422: Errors},
    summary="Revenue, cost and margin per GPU-hour and per MW-year, per accelerator",
)
def margin(request: HttpRequest, query: Query[EconQuery]):
    reading = econ.read(asked_of(request, query), org=optional_org(request))
    return {
        **reading_out(reading),
        "rows": [row_out(p, with_fleet=False) for p in econ.priced(reading)],
    }


@router.get(
    "/fleet",
    response={200: dict[str, Any], 422: Errors},
    summary="GPUs, concurrent users, tokens and $/month a power budget buys, per accelerator",
)
def fleet(request: HttpRequest, query: Query[EconQuery]):
    reading = econ.read(asked_of(request, query), org=optional_org(request))
    return {
        **reading_out(reading),
        "megawatts": query.megawatts,
        "rows": [row_out(p, with_fleet=True) for p in econ.priced(reading)],
    }


def side_out(side: Side | None) -> dict[str, Any] | None:
    if side is None:
        return None
    return {
        "accelerator": side.sku,
        "point": point_out(side.point),
        "output_tok_s_per_gpu": side.tok_s_per_gpu,
        "usd_per_mtok_output": side.usd_per_mtok,
        "reason": side.reason,
    }


@router.get(
    "/first-token",
    response={200: dict[str, Any], 422: Errors},
    summary="The cheapest measured configuration per vendor and accelerator under TTFT caps",
)
def first_token(request: HttpRequest, query: Query[EconQuery]):
    found = econ.first_token(asked_of(request, query), org=optional_org(request))
    return {
        "model": query.model,
        "scenario": found.scenario.slug,
        "slo_tier": found.reading_slo.tier.as_dict(),
        "interactivity_floor": found.floor,
        "price_tier": query.tier,
        "price_set": price_set_out(found.price_set),
        "basis": "$ per Mtok of output, at output tok/s per GPU",
        "denominator": econ.DENOMINATOR,
        "caps": [
            {
                TTFT.ceiling_param: cap.cap_s,
                "slo": cap.slo.describe(),
                "met": cap.met,
                "by_vendor": [
                    {"vendor": vendor, "cheapest": side_out(side)} for vendor, side in cap.by_vendor
                ],
                "by_accelerator": [side_out(side) for side in cap.by_accelerator],
            }
            for cap in found.caps
        ],
    }


class FeedQuery(SloQuery):
    model: str = Field("", max_length=200, description="one model (blank: every model)")
    scenario: str = Field("", max_length=200, description="one scenario slug (blank: every one)")
    date: str = Field(
        "", max_length=100, description="prices in force on this date (YYYY-MM-DD) or a set name"
    )
    format: Literal["json", "csv"] = "json"


def feed_csv(rows: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(feed.TCO_COLUMNS)
    for row in rows:
        writer.writerow(["" if row[c] is None else safe_cell(row[c]) for c in feed.TCO_COLUMNS])
    return out.getvalue()


@router.get(
    "/tco-feed",
    response={200: dict[str, Any], 422: Errors},
    summary="One row per configuration × SLO tier × price tier (JSON, or CSV with format=csv)",
    # format=csv answers the same rows as a CSV (docs/tco-feed.md): the document says so.
    openapi_extra={
        "responses": {
            200: {"content": {"text/csv": {"schema": {"type": "string"}}}},
        }
    },
)
def tco_feed(request: HttpRequest, query: Query[FeedQuery]):
    """docs/tco-feed.md describes the columns. Anonymous reads carry an ETag (the site's
    validators, apps/http_cache.py): If-None-Match answers 304."""
    try:
        chosen, rows = feed.tco_feed(
            org=optional_org(request),
            model=query.model.strip(),
            scenario=query.scenario.strip(),
            prices_as_of=query.date.strip(),
        )
    except CostInputError as error:  # the price set's own name for the field is prices_as_of
        raise CostInputError("date", error.message) from None
    if query.format == "csv":
        response = HttpResponse(feed_csv(rows), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="inferboard-tco-feed.csv"'
        return response
    return {"price_set": _set(chosen), "columns": list(feed.TCO_COLUMNS), "rows": rows}


def _set(chosen: PriceSet) -> dict[str, Any]:
    return price_set_out(chosen)
