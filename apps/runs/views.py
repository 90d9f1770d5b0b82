"""The run list at /runs/: filters by provenance, facets and dates, a page at a time."""

from django.http import HttpRequest, HttpResponse

from apps.accounts.scoping import viewer_org
from apps.htmx import page_or_partial, paged
from apps.runs import selectors
from apps.runs.forms import FACETS, RunListQuery
from apps.runs.models import Run

PAGE_SIZE = 50


def run_index(request: HttpRequest) -> HttpResponse:
    """Visible runs, newest first, narrowed by any number of accelerators, engines and
    quantizations and a date range, 50 a page; HTMX requests get only the table partial."""
    org = viewer_org(request)
    facets = selectors.run_facets(org=org)
    query = RunListQuery(request.GET, facets=facets)
    values = query.values()
    provenance, since, until = values["provenance"], values["since"], values["until"]
    picked = {field: values[field] for field in FACETS}
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
        "problems": query.problems(),
    }
    return page_or_partial(request, "runs/run_index.html", "run-table", context)
