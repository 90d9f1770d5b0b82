"""The run list at /runs/: filters by provenance, facets and dates, a page at a time."""

from datetime import date

from django.http import HttpRequest, HttpResponse

from apps.accounts.scoping import viewer_org
from apps.htmx import page_or_partial, paged
from apps.runs import selectors
from apps.runs.models import Run

PAGE_SIZE = 50
# Query field -> the label the filter shows, for messages about bad values.
LABELS = {
    "provenance": "Provenance",
    "accelerator": "Accelerators",
    "engine": "Engines",
    "quantization": "Quantizations",
    "since": "Added from",
    "until": "Added until",
    "page": "Page",
}


def _date(value: str, field: str, problems: list[str]) -> date | None:
    if not value:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        problems.append(f"{LABELS[field]}: “{value}” is not a date like 2026-11-30; ignored.")
        return None


def run_index(request: HttpRequest) -> HttpResponse:
    """Visible runs, newest first, narrowed by any number of accelerators, engines and
    quantizations and a date range, 50 a page; HTMX requests get only the table partial."""
    problems: list[str] = []
    org = viewer_org(request)
    facets = selectors.run_facets(org=org)
    provenance = request.GET.get("provenance") or None
    if provenance not in (None, *Run.Provenance.values):
        problems.append(f"{LABELS['provenance']}: “{provenance}” is not one of the choices.")
        provenance = None
    picked = {}
    for field in ("accelerator", "engine", "quantization"):
        values = [v for v in request.GET.getlist(field) if v]
        unknown = [v for v in values if v not in facets[field]]
        if unknown:
            problems.append(f"{LABELS[field]}: no run has {', '.join(unknown)}; ignored.")
        picked[field] = [v for v in values if v in facets[field]]
    since = _date(request.GET.get("since", ""), "since", problems)
    until = _date(request.GET.get("until", ""), "until", problems)
    if since and until and since > until:
        problems.append("Added from is after Added until: no run can match; the range is ignored.")
        since = until = None
    runs = selectors.runs_narrowed(
        selectors.run_list(org=org, filters=selectors.RunFilters(provenance=provenance)),
        accelerators=picked["accelerator"],
        engines=picked["engine"],
        quantizations=picked["quantization"],
        since=since,
        until=until,
    )
    listed = paged(runs, request.GET, PAGE_SIZE)
    context = {
        **listed,
        "runs": listed["items"],
        "provenance": provenance or "",
        "provenances": Run.Provenance.values,
        "facets": facets,
        "picked": picked,
        "since": since.isoformat() if since else "",
        "until": until.isoformat() if until else "",
        "problems": problems,
    }
    return page_or_partial(request, "runs/run_index.html", "run-table", context)
