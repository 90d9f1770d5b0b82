"""The TCO feed: one row per configuration × SLO tier × price tier, for spreadsheets
(docs/tco-feed.md describes the columns). Each configuration's point is the answer's rule at
that tier (apps/costs/answer.best_side over its latest complete sweep), priced at that tier of
the price set in force on the asked date; tok/s per GPU over all deployed GPUs."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from apps.accounts.models import Organization
from apps.catalog import slo_tiers
from apps.catalog.models import Deployment, Scenario
from apps.costs.answer import best_side, by_deployment
from apps.costs.answer_selectors import answer_runs, measured_points
from apps.costs.formulas import TokenKind, tok_per_s_per_mw, usd_per_mtok
from apps.costs.reference import PriceSet
from apps.costs.selectors import PriceBook, price_book
from apps.costs.slo_query import SloAsk
from apps.economics.selectors import DENOMINATOR, pools_text
from apps.runs.selectors import runs_visible

# The feed's columns, in order (docs/tco-feed.md describes each).
TCO_COLUMNS = (
    "model",
    "scenario",
    "deployment_id",
    "deployment",
    "accelerator",
    "serving",
    "pools",
    "gpus",
    "slo_tier",
    "slo",
    "price_tier",
    "run_id",
    "run_date",
    "level",
    "output_tok_s_per_gpu",
    "total_tok_s_per_gpu",
    "usd_per_gpu_hour",
    "usd_per_mtok_output",
    "usd_per_mtok_total",
    "all_in_kw_per_gpu",
    "output_tok_s_per_mw",
    "total_tok_s_per_mw",
    "price_set",
    "price_set_date",
    "denominator",
)


def _day(moment: datetime | None) -> str:
    return moment.date().isoformat() if moment else ""


def _round(value: float | None, places: int = 6) -> float | None:
    return round(value, places) if value is not None else None


def _scenario_rows(
    found: Scenario, *, org: Organization | None, model: str, book: PriceBook, tiers: list[str]
) -> list[dict[str, Any]]:
    """tco_feed's rows of one scenario: each deployment × SLO tier × price tier."""
    runs = answer_runs(org=org, model=model, scenario=found)
    output = measured_points(runs, scenario=found, basis=TokenKind.OUTPUT, prices={})
    total = {
        p.point_id: p.tok_s_per_gpu
        for p in measured_points(runs, scenario=found, basis=TokenKind.TOTAL, prices={})
    }
    deployments = Deployment.objects.in_bulk({p.deployment_id for p in output})
    tier_slos = [(t, SloAsk(t.name).resolve(found)) for t in slo_tiers.scenario_tiers(found)]
    rows: list[dict[str, Any]] = []
    for deployment_id in sorted(deployments):
        d = deployments[deployment_id]
        sku = d.accelerator.sku.upper()
        prices = book.get(sku)
        for tier, asked_slo in tier_slos:
            side = best_side(output, f"#{deployment_id}", asked_slo.slo, side_of=by_deployment)
            point = side.point
            run = {
                "run_id": point.run_id if point else None,
                "run_date": _day(point.measured_at) if point else "",
                "level": point.level if point else "",
            }
            tot = total.get(point.point_id) if point else None
            for price_tier in tiers:
                usd = prices.usd_per_gpu_hour.get(price_tier) if prices else None
                kw = prices.all_in_kw if prices else None
                rows.append(
                    {
                        **_deployment_columns(d, sku, found),
                        "slo_tier": tier.name,
                        "slo": asked_slo.describe(),
                        "price_tier": price_tier,
                        **run,
                        **_priced_columns(usd, kw, side.tok_s_per_gpu, tot),
                        "price_set": book.price_set.name,
                        "price_set_date": book.price_set.in_force_from.isoformat(),
                        "denominator": DENOMINATOR,
                    }
                )
    return rows


def _deployment_columns(d: Deployment, sku: str, found: Scenario) -> dict[str, Any]:
    return {
        "model": d.model.name,
        "scenario": found.slug,
        "deployment_id": d.pk,
        "deployment": str(d),
        "accelerator": sku,
        "serving": "disaggregated" if d.disaggregated else "aggregated",
        "pools": pools_text(d),
        "gpus": d.gpus,
    }


def _priced_columns(
    usd: float | None, kw: float | None, out: float | None, tot: float | None
) -> dict[str, Any]:
    return {
        "output_tok_s_per_gpu": _round(out),
        "total_tok_s_per_gpu": _round(tot),
        "usd_per_gpu_hour": usd,
        "usd_per_mtok_output": _round(usd_per_mtok(usd, out)) if usd is not None and out else None,
        "usd_per_mtok_total": _round(usd_per_mtok(usd, tot)) if usd is not None and tot else None,
        "all_in_kw_per_gpu": kw,
        "output_tok_s_per_mw": _round(tok_per_s_per_mw(kw, 1, out), 3) if kw and out else None,
        "total_tok_s_per_mw": _round(tok_per_s_per_mw(kw, 1, tot), 3) if kw and tot else None,
    }


def tco_feed(
    *,
    org: Organization | None,
    model: str = "",
    scenario: str = "",
    prices_as_of: str | date = "",
) -> tuple[PriceSet, list[dict[str, Any]]]:
    """One row per configuration (a deployment's latest complete sweep in a scenario) × SLO
    tier × reference price tier: the configuration's answer-rule point at that tier (its best
    measured point meeting it), priced at that tier of the price set in force on
    `prices_as_of`. A tier no point meets is a row with empty figures. Stable order: model,
    scenario, deployment, SLO tier, price tier."""
    book = price_book(org=org, prices_as_of=prices_as_of)
    tiers = sorted({t for b in book.values() for t in b.usd_per_gpu_hour})
    visible = runs_visible(org=org)
    if model:
        visible = visible.filter(deployment__model__name=model)
    scenarios = Scenario.objects.filter(pk__in=visible.values("scenario_id")).order_by("slug")
    if scenario:
        scenarios = scenarios.filter(slug=scenario)
    rows = [
        row
        for found in scenarios
        for row in _scenario_rows(found, org=org, model=model, book=book, tiers=tiers)
    ]
    rows.sort(
        key=lambda r: (
            r["model"],
            r["scenario"],
            r["deployment_id"],
            slo_tiers.TIER_NAMES.index(r["slo_tier"]),
            r["price_tier"],
        )
    )
    return book.price_set, rows
