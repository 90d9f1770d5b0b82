from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from apps.runs import selectors
from apps.runs.models import Run

PAGE_SIZE = 50


def run_index(request: HttpRequest) -> HttpResponse:
    """All visible runs, newest first; HTMX requests get only the table partial."""
    provenance = request.GET.get("provenance") or None
    if provenance not in (None, *Run.Provenance.values):
        provenance = None
    runs = selectors.run_list(org=None, filters=selectors.RunFilters(provenance=provenance))
    template = "runs/run_index.html#run-table" if request.htmx else "runs/run_index.html"
    context = {
        "runs": runs[:PAGE_SIZE],
        "total": runs.count(),
        "provenance": provenance or "",
        "provenances": Run.Provenance.values,
    }
    return render(request, template, context)


def run_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    run = selectors.run_get(org=None, run_id=run_id)
    if run is None:
        raise Http404("No such run")
    context = {
        "run": run,
        "points": selectors.run_points(run=run),
        "records": selectors.run_record_count(run=run),
    }
    return render(request, "runs/run_detail.html", context)
