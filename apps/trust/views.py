"""Pages and downloads for the board's trust: bundles, public dumps, the staff review queue."""

from __future__ import annotations

from django.contrib.auth.decorators import permission_required
from django.http import (
    FileResponse,
    Http404,
    HttpRequest,
    HttpResponse,
    StreamingHttpResponse,
)
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from apps.accounts.ratelimit import RateLimited, download_limit
from apps.accounts.scoping import may_publish, viewer_org
from apps.runs.selectors import run_get
from apps.trust import dumps, selectors
from apps.trust.bundle import bundle_chunks
from apps.trust.models import Review
from apps.trust.services import ReviewError, review_decide, review_propose


def bundle(request: HttpRequest, run_id: int) -> HttpResponse:
    run = run_get(org=viewer_org(request), run_id=run_id)
    if run is None:
        raise Http404("No such run")
    try:
        download_limit(request)
    except RateLimited as exc:
        refused = HttpResponse(str(exc), status=429, content_type="text/plain; charset=utf-8")
        refused["Retry-After"] = str(exc.retry_after)
        return refused
    # Streamed: the zip is written as it is sent (apps/trust/bundle.py), so a large run's
    # bundle holds a chunk in memory, not the whole archive.
    response = StreamingHttpResponse(bundle_chunks(run=run), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="run-{run.pk}-bundle.zip"'
    return response


DUMP_TYPES = {
    "runs.jsonl": "application/x-ndjson",
    "points.csv": "text/csv",
    "points.parquet": "application/vnd.apache.parquet",
}


def dump(request: HttpRequest, name: str) -> FileResponse:
    """A public dump (apps/trust/dumps.py): public runs only, the same file for everyone."""
    if name not in DUMP_TYPES:
        raise Http404("No such dump")
    path = dumps.dump_path(name)
    response = FileResponse(path.open("rb"), content_type=DUMP_TYPES[name])
    response["Content-Disposition"] = f'attachment; filename="inferboard-{name}"'
    return response


@require_POST
def propose(request: HttpRequest, run_id: int) -> HttpResponse:
    run = run_get(org=viewer_org(request), run_id=run_id)
    if run is None or not may_publish(request, run):
        raise Http404("No such run")
    try:
        review_propose(run=run, actor=request.user.get_username())
    except ReviewError as exc:
        return HttpResponse(f"{exc.field}: {exc.message}", status=400)
    return redirect("run-detail", run.pk)


@permission_required("trust.review_runs", raise_exception=True)
def review_queue(request: HttpRequest) -> HttpResponse:
    return render(request, "trust/review_queue.html", {"reviews": selectors.review_queue()})


@require_POST
@permission_required("trust.review_runs", raise_exception=True)
def review_decision(request: HttpRequest, review_id: int) -> HttpResponse:
    review = get_object_or_404(Review, pk=review_id)
    decision = request.POST.get("decision")
    if decision not in {"approve", "reject"}:
        return HttpResponse("decision: approve or reject", status=400)
    try:
        review_decide(
            review=review,
            approve=decision == "approve",
            reason=request.POST.get("reason", ""),
            actor=request.user.get_username(),
        )
    except ReviewError as exc:
        return HttpResponse(f"{exc.field}: {exc.message}", status=400)
    return redirect("review-queue")
