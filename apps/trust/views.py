"""Pages and downloads for the board's trust: bundles, public dumps, the staff review queue."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator

from django.contrib.auth.decorators import permission_required
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from apps.accounts.scoping import may_publish, viewer_org
from apps.csv_safe import safe_rows
from apps.runs.selectors import run_get
from apps.trust import selectors
from apps.trust.bundle import run_bundle
from apps.trust.models import Review
from apps.trust.services import ReviewError, review_decide, review_propose


def bundle(request: HttpRequest, run_id: int) -> HttpResponse:
    run = run_get(org=viewer_org(request), run_id=run_id)
    if run is None:
        raise Http404("No such run")
    response = HttpResponse(run_bundle(run=run), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="run-{run.pk}-bundle.zip"'
    return response


def dump_documents(request: HttpRequest) -> StreamingHttpResponse:
    """Every public run's result document (records left out: they are in each bundle)."""
    lines = (json.dumps(document) + "\n" for document in selectors.public_documents())
    response = StreamingHttpResponse(lines, content_type="application/x-ndjson")
    response["Content-Disposition"] = 'attachment; filename="inferboard-runs.jsonl"'
    return response


def dump_points(request: HttpRequest) -> StreamingHttpResponse:
    """Every point of every public run, one row each (columns: selectors.POINT_COLUMNS)."""

    def rows() -> Iterator[str]:
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(selectors.POINT_COLUMNS)
        for row in safe_rows(selectors.public_points()):
            writer.writerow([row[c] for c in selectors.POINT_COLUMNS])
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
        yield buffer.getvalue()

    response = StreamingHttpResponse(rows(), content_type="text/csv")
    response["Content-Disposition"] = 'attachment; filename="inferboard-points.csv"'
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
