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
from workers.audit import CODES

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


AUDIT_PAGE_SIZE = 50


def audit_index(request: HttpRequest) -> HttpResponse:
    """The runs the row audit flagged (workers/audit.py), with their reasons and the counts
    per reason and accelerator: GET /api/v1/audit as a page, the same filters, 50 a page."""
    org = viewer_org(request)
    codes = set(CODES)
    reason = request.GET.get("reason", "").strip()
    filters = selectors.AuditFilters(
        source=request.GET.get("source", "").strip()[:100] or None,
        accelerator=request.GET.get("accelerator", "").strip()[:50] or None,
        reason=reason if reason in codes else None,
    )
    runs = selectors.flagged_runs(org=org, filters=filters)
    listed = paged(runs, request.GET, AUDIT_PAGE_SIZE)
    context = {
        **listed,
        "rows": [selectors.audit_row(run) for run in listed["items"]],
        "counts": selectors.audit_counts(runs),
        "filters": filters,
        "codes": CODES,
        "problems": [] if not reason or reason in codes else [f"reason: unknown code {reason!r}"],
    }
    return page_or_partial(request, "runs/audit.html", "audit-table", context)


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
