from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from apps.accounts.scoping import viewer_org
from apps.runs import selectors
from apps.runs.models import Run

PAGE_SIZE = 50


def run_index(request: HttpRequest) -> HttpResponse:
    """All visible runs, newest first; HTMX requests get only the table partial."""
    provenance = request.GET.get("provenance") or None
    if provenance not in (None, *Run.Provenance.values):
        provenance = None
    runs = selectors.run_list(
        org=viewer_org(request), filters=selectors.RunFilters(provenance=provenance)
    )
    template = "runs/run_index.html#run-table" if request.htmx else "runs/run_index.html"
    context = {
        "runs": runs[:PAGE_SIZE],
        "total": runs.count(),
        "provenance": provenance or "",
        "provenances": Run.Provenance.values,
    }
    return render(request, template, context)
