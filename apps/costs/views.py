"""The procurement page at /costs/: HTMX partial swaps, full state in the URL, exports."""

from __future__ import annotations

import csv
import io
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse, JsonResponse

from apps.accounts.scoping import viewer_org
from apps.costs import selectors
from apps.costs.charts import cost_vs_interactivity
from apps.costs.claims import ClaimPage, Comparison, claim_page
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
from apps.htmx import page_or_partial
from apps.projections import selectors as projection_selectors
from apps.projections.claims import projected_cost_ratios, projected_throughput_ratio
from apps.projections.procurement import projected_plan
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


# Each query field's visible label, so a message names what the reader sees on the form.
FIELD_LABELS = {
    "tier": "Tier",
    "tier_a": "A: Tier",
    "tier_b": "B: Tier",
    "ttft_s_max": "TTFT ≤ (s)",
    "ttft_percentile": "TTFT percentile",
    "interactivity_min": "Interactivity p50 ≥ (tok/s/user)",
    "e2el_s_max": "E2EL p99 ≤ (s)",
    "requests_per_day": "Requests/day",
    "input_tokens": "Input tokens",
    "output_tokens": "Output tokens",
    "cache_hit_rate": "Prefix-cache hit rate",
    "peak_to_average": "Peak ÷ average",
    "headroom": "Headroom",
    "gpus_per_node": "GPUs/node",
    "token_kind": "Throughput counts",
    "capex_accelerator": "Apply to",
    "throughput_ratio": "Throughput A ÷ B",
    "claimed_cost_ratio": "Cost ratio claimed",
    "comparison": "Cost ratio claimed (comparison)",
    "accelerator_a": "A: Accelerator",
    "accelerator_b": "B: Accelerator",
    "price_a": "A: own $/GPU-hr",
    "price_b": "B: own $/GPU-hr",
    **{name: label for name, label, _ in CAPEX_FIELDS},
}
TIERS = [tier.value for tier in Tier]


def field_label(field: str) -> str:
    if field in FIELD_LABELS:
        return FIELD_LABELS[field]
    if field.startswith(PRICE_PREFIX):
        return f"{field.removeprefix(PRICE_PREFIX).upper()} own $/GPU-hr"
    return field


def _unknown_tiers(query, fields: tuple[str, ...], book) -> list[FieldError]:
    """A tier no price in the book has is named, never silently priced as "—" everywhere
    (a tier only some accelerators lack stays a note on their rows)."""
    errors = []
    known = set(TIERS) | {tier for prices in book.values() for tier in prices.usd_per_gpu_hour}
    choices = ", ".join(TIER_LABELS.get(t, t) for t in sorted(known))
    for field in fields:
        value = query.get(field)
        if value and value not in known:
            errors.append(
                FieldError(field, f"no accelerator has a “{value}” price (tiers: {choices})")
            )
    return errors


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
        "field_labels": {error.field: field_label(error.field) for error in errors},
        "notices": [
            f"{field_label(n.field)}: {n.message}"
            for n in _unknown_tiers(request.GET, ("tier",), selectors.price_book(org=None))
        ],
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
    _add_projected(context, request, inputs)
    return page_or_partial(request, "costs/procurement.html", "results", context)


def _add_projected(
    context: dict[str, Any], request: HttpRequest, inputs: ProcurementInputs | None
) -> None:
    """Opt-in (?projected=1): accelerators nobody measured for this workload, priced with
    the projection's band (low/high GPUs and $/month), apart from the ranked rows."""
    context["show_projected"] = request.GET.get("projected") in {"1", "on", "true"}
    if not context["show_projected"] or inputs is None:
        return
    workload = inputs.workload
    projection = projection_selectors.projection_for_shape(
        input_tokens=workload.input_tokens,
        output_tokens=workload.output_tokens,
        cache_hit_rate=workload.cache_hit_rate,
    )
    context["projection"] = projection
    if projection is not None:
        book = selectors.price_book(org=viewer_org(request))
        context["projected_plan"] = projected_plan(projection, inputs, book)


def _export(request: HttpRequest) -> tuple[list[dict[str, object]], list[FieldError]]:
    _, inputs, errors, rows = _calculate(request)
    # A download cannot show a notice: an unknown tier is an error there.
    errors = _unknown_tiers(request.GET, ("tier",), selectors.price_book(org=None)) + errors
    if inputs is None or errors:
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
    detail = [
        {"path": error.field, "label": field_label(error.field), "message": error.message}
        for error in errors
    ]
    return JsonResponse({"detail": detail}, status=422)


def claim(request: HttpRequest) -> HttpResponse:
    """Check a published cost claim against price tiers and stored runs."""
    kind = request.GET.get("token_kind", TokenKind.OUTPUT.value)
    if kind not in {k.value for k in TokenKind}:
        kind = TokenKind.OUTPUT.value
    org = viewer_org(request)
    book = selectors.price_book(org=org)
    curves = selectors.deployment_curves(org=org, kind=TokenKind(kind))
    query, errors = request.GET, _unknown_tiers(request.GET, ("tier_a", "tier_b"), book)
    for field in ("throughput_ratio", "claimed_cost_ratio"):
        try:
            if query.get(field) and float(query[field]) <= 0:
                errors.append(FieldError(field, f"must be greater than zero (got {query[field]})"))
        except ValueError:
            pass  # claim_page names a non-number itself
    page = claim_page(query, book, curves)
    if errors:
        page = ClaimPage(page.values, tuple(errors) + page.errors)
    context = {
        "page": page,
        "values": page.values,
        "error_fields": {error.field for error in page.errors},
        "field_labels": {error.field: field_label(error.field) for error in page.errors},
        "tiers": [(tier.value, TIER_LABELS[tier.value]) for tier in Tier],
        "accelerators": sorted(book),
        "comparisons": [c.value for c in Comparison],
    }
    _add_projected_claim(context, request, page)
    return page_or_partial(request, "costs/claim.html", "claim-result", context)


def _add_projected_claim(context: dict[str, Any], request: HttpRequest, page: ClaimPage) -> None:
    """Only when asked (?projected=1): the throughput ratio a projection gives, beside the
    claim's own check and never in it, labelled projected."""
    context["show_projected"] = request.GET.get("projected") in {"1", "on", "true"}
    sides = (page.values.get("accelerator_a", "").upper(), page.values.get("accelerator_b", ""))
    if not context["show_projected"] or page.errors or sides != ("MI355X", "B200"):
        return
    projection = projection_selectors.projection_for_shape(
        input_tokens=None, output_tokens=None, cache_hit_rate=None
    )
    ratio = projected_throughput_ratio(projection) if projection else None
    if ratio is None or page.price_a is None or page.price_b is None:
        return
    context["projected_claim"] = {
        **ratio,
        **projected_cost_ratios(
            ratio,
            usd_per_gpu_hour_a=page.price_a.usd_per_gpu_hour,
            usd_per_gpu_hour_b=page.price_b.usd_per_gpu_hour,
        ),
        "median_ape": projection["validation"].median_ape,
    }
