"""Costs of stored runs: one run at an SLO, the procurement table, and two runs compared."""

from __future__ import annotations

from collections.abc import Mapping

from django.http import HttpRequest
from ninja import Query, Router, Status

from apps.accounts.auth import optional_org
from apps.accounts.models import Organization
from apps.api_errors import Errors, error_body
from apps.costs import selectors
from apps.costs.answer_selectors import scenario_rows
from apps.costs.api.common import price_out, request_price, side_prices, slo_cost_out
from apps.costs.api.schemas import CompareOut, CompareQuery, RunSloQuery, SloCostOut
from apps.costs.claims import compare_runs
from apps.costs.curve_selectors import procurement_curves
from apps.costs.forms import ProcurementQuery
from apps.costs.formulas import TokenKind
from apps.costs.prices import with_profile_prices
from apps.costs.procurement import curve_readings, procurement_rows
from apps.costs.procurement_export import export_records
from apps.costs.reference import PRICES_AS_OF
from apps.costs.slo import cost_at_slo

router = Router()


@router.get(
    "/runs/{run_id}/slo",
    response={200: SloCostOut, 404: Errors, 422: Errors},
    summary="Best throughput and $/Mtok at an SLO for a stored run",
)
def run_slo_cost(request: HttpRequest, run_id: int, query: Query[RunSloQuery]):
    """The run's points priced at the given price, or at its accelerator's tier."""
    org = optional_org(request)
    curves = selectors.deployment_curves(org=org, kind=TokenKind(query.token_kind), run_id=run_id)
    if not curves:
        return Status(404, error_body("run_id", "no visible run with throughput"))
    (curve,) = curves
    price = request_price(
        request, query.usd_per_gpu_hour, query.accelerator or curve.accelerator, query.tier
    )
    slo = query.slo()
    cost = cost_at_slo(curve.points, slo, price.usd_per_gpu_hour)
    basis = TokenKind(query.token_kind)
    return slo_cost_out(
        cost,
        slo,
        price,
        tok_s_kind="unstated" if curve.token_kind == "unlabelled" else basis.value,
        readings=curve_readings(curve, cost.result.tok_per_s_per_gpu, basis),
    )


@router.get(
    "/procurement",
    response={200: dict, 422: Errors},
    summary="The procurement calculator's ranked table",
)
def procurement_table(request: HttpRequest):
    """Takes the same query parameters as the /costs/ page (tier, price_<SKU>, ttft_s_max,
    interactivity_min, e2el_s_max, requests_per_day, input_tokens, output_tokens,
    cache_hit_rate, peak_to_average, headroom, gpus_per_node, token_kind, and for an own
    price built from capex + opex: capex_accelerator, gpu_purchase_usd, server_share_usd,
    depreciation_years, kw_per_gpu, usd_per_kwh, pue, hosting_usd_per_month, utilization;
    model, scenario, min_success_pct, workload_unit with tokens_per_day /
    input_tokens_per_day + output_tokens_per_day / peak_requests_per_s, length_mix, and the
    sell_*_usd_per_mtok token prices, and the SLO: slo (a tier), interpolate, max_gap) and
    returns its rows, cheapest $/Mtok first, each with the price it used. The token's
    organization's active price profile applies."""
    status, body = procurement_answer(request.GET, org=optional_org(request))
    return Status(status, body)


def procurement_answer(params: Mapping[str, str], *, org: Organization | None) -> tuple[int, dict]:
    """GET /api/v1/costs/procurement's (status, body) for a /costs/-style query: the MCP
    server's `costs` (apps/agents) asks this too."""
    book = selectors.price_book(org=org, prices_as_of=params.get(PRICES_AS_OF, ""))
    # The token's organization's active price profile applies, as on every page.
    profiled = with_profile_prices(params, org)
    query = ProcurementQuery(
        profiled.params,
        book,
        profile=profiled,
        scenarios=scenario_rows(org=org, slug=profiled.params.get("scenario", "")),
    )
    inputs = query.inputs()
    if inputs is None:
        detail = [{"path": error.field, "message": error.message} for error in query.problems()]
        return 422, {"detail": detail}
    # The page's rows (apps/costs/views.py), each deployment's sweep at the answer's point.
    curves = procurement_curves(
        org=org, kind=inputs.token_kind, model=inputs.model, scenario=inputs.scenario
    )
    rows = procurement_rows(curves, inputs, book)
    return 200, {
        "state": query.data,
        "price_profile": profiled.profile,
        "rows": export_records(rows, inputs),
    }


@router.get(
    "/compare",
    response={200: CompareOut, 404: Errors, 422: Errors},
    summary="A vs B: cost ratio at an SLO with everything that differs",
)
def compare(request: HttpRequest, query: Query[CompareQuery]):
    org = optional_org(request)
    kind = TokenKind(query.token_kind)
    curves = {}
    for side, run_id in (("a", query.run_a), ("b", query.run_b)):
        found = selectors.deployment_curves(org=org, kind=kind, run_id=run_id)
        if not found:
            message = "no visible run with throughput"
            return Status(404, error_body(f"run_{side}", message))
        curves[side] = found[0]
    accelerators = (curves["a"].accelerator, curves["b"].accelerator)
    price_a, price_b = side_prices(request, query, accelerators)
    slo = query.slo()
    result = compare_runs(curves["a"], price_a, curves["b"], price_b, slo)

    def side_out(side) -> dict:
        return {
            "run_id": side.curve.run_id,
            "deployment": side.curve.label,
            "tok_per_s_per_gpu": side.result.tok_per_s_per_gpu,
            "throughput_at_slo": side.result.provenance,
            "usd_per_mtok": side.usd_per_mtok,
            "reason": side.result.reason,
            "price": price_out(side.price),
        }

    return {
        "cost_ratio": result.cost_ratio,
        "throughput_ratio": result.throughput_ratio,
        "slo": slo.describe(),
        "a": side_out(result.a),
        "b": side_out(result.b),
        "differences": [
            {
                "field": d.field,
                "a": None if d.a is None else str(d.a),
                "b": None if d.b is None else str(d.b),
            }
            for d in result.differences
        ],
        "reason": result.reason,
    }
