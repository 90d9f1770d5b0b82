"""The run list at /runs/ (filters by provenance, facets and dates, a page at a time), and
publishing a run."""

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from apps.accounts.models import Role
from apps.accounts.scoping import actor_of, orgs_of, require_role, viewer_org
from apps.htmx import page_or_partial, paged
from apps.runs import selectors
from apps.runs.forms import FACETS, RunListQuery
from apps.runs.models import Run
from apps.runs.services import run_set_public, runs_version_bump

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


# Publishing: an organization's admin makes its run public, or private again.


def _set_public(request: HttpRequest, run_id: int, public: bool) -> HttpResponse:
    if not request.user.is_authenticated:
        raise PermissionDenied("sign in to publish runs")
    run = get_object_or_404(Run, pk=run_id, org__in=orgs_of(request.user))
    require_role(run.org, request.user, Role.ADMIN)
    run_set_public(run=run, public=public, actor=actor_of(request))
    runs_version_bump()  # cached public pages must show (or stop showing) it now
    return redirect("run-detail", run_id=run.pk)


@require_POST
def run_publish(request: HttpRequest, run_id: int) -> HttpResponse:
    return _set_public(request, run_id, True)


@require_POST
def run_unpublish(request: HttpRequest, run_id: int) -> HttpResponse:
    return _set_public(request, run_id, False)
