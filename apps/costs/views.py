"""The procurement page at /costs/: HTMX partial swaps, full state in the URL, exports."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import replace
from functools import wraps
from typing import Any
from urllib.parse import urlencode

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.urls import reverse
from django.views.decorators.http import require_POST

from apps.accounts.models import Organization
from apps.accounts.scoping import current_org, viewer_org, visible_to
from apps.catalog import slo_tiers
from apps.catalog.models import Model, Scenario
from apps.catalog.selectors import scenario_list
from apps.costs import selectors, services
from apps.costs.answer_selectors import scenario_rows
from apps.costs.charts import cost_of_latency_figure, cost_vs_interactivity
from apps.costs.curve_selectors import awaiting_review_count, procurement_curves
from apps.costs.forms import (
    CAPEX_FIELDS,
    CostForm,
    ProcurementQuery,
    field_label,
    unknown_tier,
)
from apps.costs.formulas import CostInputError, Tier, TokenKind
from apps.costs.models import PriceProfile, SavedPage
from apps.costs.post_forms import ActiveProfileForm, ProfileForm, SavedPageForm
from apps.costs.prices import LINK_ONLY, asked_price_set, with_profile_prices
from apps.costs.procurement import Row, cost_of_latency, procurement_rows
from apps.costs.procurement_answer import cheaper_at_slo
from apps.costs.procurement_export import EXPORT_COLUMNS, export_records
from apps.costs.procurement_inputs import (
    DEFAULTS,
    PRICE_PREFIX,
    SELL_FIELDS,
    WORKLOAD_UNITS,
    FieldError,
    ProcurementInputs,
)
from apps.costs.procurement_table import (
    SHOW_ALL,
    Filters,
    Served,
    choices,
    default_model,
    labelled,
    served_facts,
    table_page,
)
from apps.costs.projected import projected_plan
from apps.costs.reference import PRICES_AS_OF, TIER_LABELS
from apps.costs.slo_query import tier_choices
from apps.csv_safe import safe_rows
from apps.htmx import page_or_partial, wants_partial
from apps.projections import selectors as projection_selectors
from workers import slo as slo_rule


def _scenario_shapes(org: Organization | None) -> dict[str, tuple[float, float]]:
    """Scenario slug -> (input, output) tokens, for a length mix named by scenarios: only the
    scenarios the viewer may see (catalog.selectors.scenario_list), so neither the mix nor its
    error message ("known: ...") names another organization's private scenario."""
    rows = scenario_list(org=org).exclude(input_tokens__isnull=True)
    rows = rows.exclude(output_tokens__isnull=True)
    return {
        slug: (float(inp), float(out))
        for slug, inp, out in rows.values_list("slug", "input_tokens", "output_tokens")
        if inp and out
    }


def _choices(org: Organization | None) -> dict[str, list[str]]:
    """The model and scenario pickers: names of runs the viewer may see (public ones and its
    organization's, accounts.scoping.visible_to), never another organization's private ones."""
    models = Model.objects.filter(visible_to(org, via="deployments__runs__"))
    scenarios = Scenario.objects.filter(visible_to(org, via="runs__"))
    return {
        "models": sorted(set(models.values_list("name", flat=True))),
        "scenarios": sorted(set(scenarios.values_list("slug", flat=True))),
    }


def _calculate(
    request: HttpRequest,
) -> tuple[ProcurementQuery, ProcurementInputs | None, list[Row], dict[int, Served]]:
    """The page's query, read once with the organization's active price profile under it
    (the one price reader, apps.costs.prices), and the rows it asks for (engine and
    speculative-decoding filters applied), with each row's served facts."""
    profiled = with_profile_prices(request.GET, current_org(request))
    # Reference prices plus what the user types; a member also gets the organization's own
    # price book and private runs (apps.accounts.scoping.viewer_org).
    org = viewer_org(request)
    if "model" not in profiled.params:
        # No model asked (not even "all", model=): the one with the most priceable runs, not
        # a mix of every model's newest runs, which no one compares.
        profiled = replace(profiled, params={**profiled.params, "model": default_model(org=org)})
    asked = asked_price_set(profiled.params)
    book = selectors.price_book(org=org, prices_as_of=asked.value)
    query = ProcurementQuery(
        profiled.params,
        book,
        profile=profiled,
        shapes=_scenario_shapes(org),
        scenarios=scenario_rows(org=org, slug=profiled.params.get("scenario", "")),
    )
    inputs = query.inputs()
    if inputs is None:
        return query, None, [], {}
    curves = procurement_curves(
        org=org,
        kind=inputs.token_kind,
        model=inputs.model,
        scenario=inputs.scenario,
        include_unreviewed=request.GET.get("unreviewed") == "1",
    )
    facts = served_facts(curve.run_id for curve in curves)
    filters = Filters(
        engine=query.data["engine"], spec=query.data["spec"], precision=inputs.precision
    )
    kept = labelled(curves, facts, filters)
    return query, inputs, procurement_rows(kept, inputs, book), facts


def _slo_form(query: ProcurementQuery) -> dict[str, Any]:
    """The SLO fieldset's tier choices and why each bound of the asked tier is where it is,
    at the asked scenario's tier."""
    scenario = query.scenario_row(query.data.get("scenario", "").strip())
    try:
        tier = slo_tiers.scenario_tier(scenario, query.data.get("slo") or None)
    except slo_rule.SloError:
        tier = slo_tiers.default_tier(scenario)
    return {"tiers": tier_choices(scenario), "picked": tier.name, "reasons": tier.reasons()}


def _unknown_tier(query: ProcurementQuery) -> list[FieldError]:
    """A tier no public price has, or a price set none is: a notice on the page, an error
    in a download."""
    asked = asked_price_set(query.data)
    found = [FieldError(PRICES_AS_OF, asked.problem)] if asked.problem else []
    message = unknown_tier(query.data["tier"], selectors.price_book(prices_as_of=asked.value))
    return found + ([FieldError("tier", message)] if message else [])


def _kept(name: str, value: str) -> bool:
    """A value a shared URL must carry: a changed one, and always the model (blank is "all
    models", which differs from the model chosen when none is given)."""
    return name == "model" or DEFAULTS.get(name) != value


def _query(values: dict[str, str]) -> str:
    """The non-default part of the state, so shared URLs stay short."""
    return urlencode({k: v for k, v in values.items() if _kept(k, v)})


def _permalink_query(values: dict[str, str]) -> str:
    return urlencode([*_query_pairs(values), LINK_ONLY])


def _query_pairs(values: dict[str, str]) -> list[tuple[str, str]]:
    return [(k, v) for k, v in values.items() if _kept(k, v) and k != LINK_ONLY[0]]


def procurement(request: HttpRequest) -> HttpResponse:
    query, inputs, rows, facts = _calculate(request)
    values, errors = query.data, query.problems()
    table = table_page(
        rows, facts, show=request.GET.get("show", ""), page=request.GET.get("page", "")
    )
    # The chart draws the rows the table shows (one trace a row), not all 200.
    chart = cost_vs_interactivity(table.rows, inputs.slo) if inputs else {"data": [], "layout": {}}
    context = {
        "values": values,
        "inputs": inputs,
        "price_set": asked_price_set(values).price_set,
        "errors": errors,
        "error_fields": {error.field for error in errors},
        "field_labels": {error.field: field_label(error.field) for error in errors},
        "notices": [f"{field_label(n.field)}: {n.message}" for n in _unknown_tier(query)],
        "rows": table.rows,
        "table": table,
        "run_limit": selectors.CURVES_LIMIT,
        "ranks": table.ranks,
        "unstated": sum(row.success_unstated for row in table.rows),
        # Public self-reported runs no reviewer approved: left out unless asked (labelled).
        "awaiting_review": awaiting_review_count(
            org=viewer_org(request), model=inputs.model if inputs else ""
        ),
        "include_unreviewed": request.GET.get("unreviewed") == "1",
        "slo_form": _slo_form(query),
        **choices(facts),
        "best_rows": [row for row in rows if row.best_for_accelerator],
        "profile_name": query.profile.profile if query.profile else None,
        **_form_context(request, values, rows),
        "chart": chart,
        "latency_chart": (
            cost_of_latency_figure(
                cost_of_latency(rows, inputs), inputs.slo, values.get("ttft_percentile") or "p99"
            )
            if inputs
            else None
        ),
    }
    _add_projected(context, request, inputs)
    # "Which is cheaper at this SLO" is the one answer service's, never the table's own pick.
    context["cheaper"] = (
        cheaper_at_slo(values, inputs, rows, org=viewer_org(request))
        if inputs and not errors
        else None
    )
    # A swap of the results carries the filters' lists out of band (the model may have
    # changed them); the whole page renders them in place.
    context["swapped"] = wants_partial(request)
    return page_or_partial(request, "costs/procurement.html", "results", context)


def _form_context(request: HttpRequest, values: dict[str, str], rows: list[Row]) -> dict[str, Any]:
    """What /costs/'s form offers: the links, the organization's profiles and saved pages, the
    choices and an own-price field per accelerator."""
    org = current_org(request)
    book = selectors.price_book(org=viewer_org(request))
    # Every accelerator of the price book gets an own-price field, so a buyer prices any two
    # side by side (not only those the rows happen to show).
    accelerators = sorted(
        {row.curve.accelerator for row in rows}
        | set(book)
        | {k.removeprefix(PRICE_PREFIX).upper() for k in values if k.startswith(PRICE_PREFIX)}
    )
    return {
        "show_all": SHOW_ALL,
        "query": _query(values),
        "permalink_query": _permalink_query(values),
        "org": org,
        "profiles": list(PriceProfile.objects.filter(org=org)) if org else [],
        "saved_pages": list(SavedPage.objects.filter(org=org)) if org else [],
        "printable": request.GET.get("print") == "1",
        "workload_units": list(WORKLOAD_UNITS.items()),
        "sell_fields": SELL_FIELDS,
        **_choices(viewer_org(request)),
        "tiers": [(tier.value, TIER_LABELS[tier.value]) for tier in Tier],
        "kinds": [kind.value for kind in TokenKind],
        "percentiles": list(slo_rule.PERCENTILES),
        "price_inputs": [
            (sku, f"{PRICE_PREFIX}{sku}", values.get(f"{PRICE_PREFIX}{sku}", ""))
            for sku in accelerators
        ],
        "all_accelerators": sorted(book),
        "capex_fields": [
            (name, label, size, values.get(name, "")) for name, label, size in CAPEX_FIELDS
        ],
    }


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
        model=inputs.model or None,
        input_tokens=workload.input_tokens,
        output_tokens=workload.output_tokens,
        cache_hit_rate=workload.cache_hit_rate,
    )
    if isinstance(projection, projection_selectors.NoProjection):
        context["no_projection"] = projection.reason
        return
    context["projection"] = projection
    if projection is not None:
        book = selectors.price_book(org=viewer_org(request))
        context["projected_plan"] = projected_plan(projection, inputs, book)


def _export(
    request: HttpRequest,
) -> tuple[ProcurementQuery, list[dict[str, object]], list[FieldError]]:
    query, inputs, rows, _ = _calculate(request)
    # A download cannot show a notice: an unknown tier is an error there.
    errors = _unknown_tier(query) + query.problems()
    if inputs is None or errors:
        return query, [], errors
    return query, export_records(rows, inputs), []


def export_csv(request: HttpRequest) -> HttpResponse:
    _, records, errors = _export(request)
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
    query, records, errors = _export(request)
    if errors:
        return _errors_response(errors)
    response = JsonResponse({"state": query.data, "rows": records})
    response["Content-Disposition"] = 'attachment; filename="inferboard-costs.json"'
    return response


def _errors_response(errors: list[FieldError]) -> JsonResponse:
    detail = [
        {"path": error.field, "label": field_label(error.field), "message": error.message}
        for error in errors
    ]
    return JsonResponse({"detail": detail}, status=422)


def _org_member(request: HttpRequest) -> Organization:
    org = current_org(request)
    if org is None:
        raise PermissionDenied("sign in and join an organization to save")
    return org


Saves = Callable[[HttpRequest, Organization, dict[str, Any]], HttpResponse]


def _posted(form_class: type[CostForm]) -> Callable[[Saves], Callable[..., HttpResponse]]:
    """A save from the cost page: a member's POST, read by `form_class` before the view
    writes; a value the form or the service refuses is a 422 naming its field."""

    def wrap(view: Saves) -> Callable[..., HttpResponse]:
        @require_POST
        @wraps(view)
        def handler(request: HttpRequest) -> HttpResponse:
            org = _org_member(request)
            form = form_class(request.POST)
            if not form.is_valid():
                return _errors_response(form.problems())
            try:
                return view(request, org, form.cleaned_data)
            except CostInputError as error:
                return _errors_response([FieldError(error.field, error.message)])

        return handler

    return wrap


@_posted(ProfileForm)
def profile_save(request: HttpRequest, org: Organization, data: dict[str, Any]) -> HttpResponse:
    """Save the page's own prices as a named profile of the organization (made active)."""
    services.price_profile_save(
        org=org,
        user=request.user,
        name=data["name"],
        usd_per_gpu_hour=data["usd_per_gpu_hour"],
        active=True,
        **{name: data[name] for name in SELL_FIELDS},
    )
    back = data["next"]
    return HttpResponseRedirect(
        back if back.startswith("/costs/") else reverse("costs:procurement")
    )


@_posted(ActiveProfileForm)
def profile_activate(request: HttpRequest, org: Organization, data: dict[str, Any]) -> HttpResponse:
    services.price_profile_activate(org=org, user=request.user, name=data["profile"])
    return HttpResponseRedirect(reverse("costs:procurement"))


@_posted(SavedPageForm)
def page_save(request: HttpRequest, org: Organization, data: dict[str, Any]) -> HttpResponse:
    """Save the page as a named comparison (or only its workload), prices written in."""
    saved = services.saved_page_save(org=org, user=request.user, **data)
    return HttpResponseRedirect(reverse("costs:saved", args=[saved.slug]))


@require_POST
def page_delete(request: HttpRequest, slug: str) -> HttpResponse:
    """Delete a saved page of the member's organization; 404 for any other slug."""
    org = _org_member(request)
    if not services.saved_page_delete(org=org, user=request.user, slug=slug):
        raise Http404("No such saved page")
    return HttpResponseRedirect(reverse("costs:procurement"))


def saved(request: HttpRequest, slug: str) -> HttpResponse:
    """A saved page's permalink: anyone with it gets the page it saved, prices included."""
    # A NUL byte is in no slug, and PostgreSQL refuses one in a query.
    found = None if "\x00" in slug else SavedPage.objects.filter(slug=slug).first()
    if found is None:
        raise Http404("No such saved page")
    return HttpResponseRedirect(f"{reverse('costs:procurement')}?{found.query}")
