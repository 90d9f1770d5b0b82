"""The procurement page at /costs/: HTMX partial swaps, full state in the URL, exports."""

from __future__ import annotations

import csv
import io
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from apps.accounts.scoping import viewer_org
from apps.costs import selectors
from apps.costs.charts import cost_vs_interactivity
from apps.costs.claims import Comparison, claim_page
from apps.costs.formulas import Tier, TokenKind
from apps.costs.procurement import (
    DEFAULTS,
    EXPORT_COLUMNS,
    PRICE_PREFIX,
    FieldError,
    ProcurementInputs,
    Row,
    export_records,
    parse_inputs,
    procurement_rows,
    state,
)
from apps.costs.reference import TIER_LABELS
from apps.csv_safe import safe_rows
from workers import slo as slo_rule

CAPEX_FIELDS = (
    ("gpu_purchase_usd", "GPU purchase $", 8),
    ("server_share_usd", "Server share per GPU $", 8),
    ("depreciation_years", "Years", 3),
    ("kw_per_gpu", "All-in kW/GPU (blank: reference)", 4),
    ("usd_per_kwh", "$/kWh", 5),
    ("pue", "PUE", 4),
    ("hosting_usd_per_month", "Hosting $/month/GPU", 6),
    ("utilization", "Utilization", 4),
)


def _calculate(
    request: HttpRequest,
) -> tuple[dict[str, str], ProcurementInputs | None, list[FieldError], list[Row]]:
    values = state(request.GET)
    # Reference prices plus what the user types; a member also gets the organization's own
    # price book and private runs (apps.accounts.scoping.viewer_org).
    org = viewer_org(request)
    book = selectors.price_book(org=org)
    inputs, errors = parse_inputs(request.GET, book)
    if inputs is None:
        return values, None, errors, []
    curves = selectors.deployment_curves(org=org, kind=inputs.token_kind)
    return values, inputs, errors, procurement_rows(curves, inputs, book)


def _query(values: dict[str, str]) -> str:
    """The non-default part of the state, so shared URLs stay short."""
    changed = {k: v for k, v in values.items() if DEFAULTS.get(k) != v}
    return urlencode(changed)


def procurement(request: HttpRequest) -> HttpResponse:
    values, inputs, errors, rows = _calculate(request)
    accelerators = sorted(
        {row.curve.accelerator for row in rows}
        | {k.removeprefix(PRICE_PREFIX).upper() for k in values if k.startswith(PRICE_PREFIX)}
    )
    chart = cost_vs_interactivity(rows, inputs.slo) if inputs else {"data": [], "layout": {}}
    context = {
        "values": values,
        "inputs": inputs,
        "errors": errors,
        "error_fields": {error.field for error in errors},
        "rows": rows,
        "query": _query(values),
        "tiers": [(tier.value, TIER_LABELS[tier.value]) for tier in Tier],
        "kinds": [kind.value for kind in TokenKind],
        "percentiles": list(slo_rule.PERCENTILES),
        "price_inputs": [
            (sku, f"{PRICE_PREFIX}{sku}", values.get(f"{PRICE_PREFIX}{sku}", ""))
            for sku in accelerators
        ],
        "chart": chart,
        "all_accelerators": sorted(selectors.price_book(org=viewer_org(request))),
        "capex_fields": [
            (name, label, size, values.get(name, "")) for name, label, size in CAPEX_FIELDS
        ],
    }
    template = "costs/procurement.html"
    if request.htmx:
        template += "#results"
    return render(request, template, context)


def _export(request: HttpRequest) -> tuple[list[dict[str, object]], list[FieldError]]:
    _, inputs, errors, rows = _calculate(request)
    if inputs is None:
        return [], errors
    return export_records(rows, inputs), []


def export_csv(request: HttpRequest) -> HttpResponse:
    records, errors = _export(request)
    if errors:
        return _errors_response(errors)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=EXPORT_COLUMNS)
    writer.writeheader()
    writer.writerows(safe_rows(records))
    response = HttpResponse(buffer.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="inferboard-costs.csv"'
    return response


def export_json(request: HttpRequest) -> HttpResponse:
    records, errors = _export(request)
    if errors:
        return _errors_response(errors)
    response = JsonResponse({"state": state(request.GET), "rows": records})
    response["Content-Disposition"] = 'attachment; filename="inferboard-costs.json"'
    return response


def _errors_response(errors: list[FieldError]) -> JsonResponse:
    detail = [{"path": error.field, "message": error.message} for error in errors]
    return JsonResponse({"detail": detail}, status=422)


def claim(request: HttpRequest) -> HttpResponse:
    """Check a published cost claim against price tiers and stored runs."""
    kind = request.GET.get("token_kind", TokenKind.OUTPUT.value)
    if kind not in {k.value for k in TokenKind}:
        kind = TokenKind.OUTPUT.value
    org = viewer_org(request)
    book = selectors.price_book(org=org)
    curves = selectors.deployment_curves(org=org, kind=TokenKind(kind))
    page = claim_page(request.GET, book, curves)
    context = {
        "page": page,
        "values": page.values,
        "error_fields": {error.field for error in page.errors},
        "tiers": [(tier.value, TIER_LABELS[tier.value]) for tier in Tier],
        "accelerators": sorted(book),
        "comparisons": [c.value for c in Comparison],
    }
    template = "costs/claim.html"
    if request.htmx:
        template += "#claim-result"
    return render(request, template, context)
