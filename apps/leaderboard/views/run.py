"""A run's page and a deployment's page."""

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from apps.accounts.scoping import may_publish, viewer_org
from apps.catalog import fairness
from apps.costs.formulas import TokenKind
from apps.costs.prices import asked_price_set, price_sheet
from apps.leaderboard import charts, deployment_selectors, run_selectors, selectors
from apps.leaderboard.views.common import BASES, csv_download
from apps.runs.models import Run
from apps.runs.selectors import run_get, run_points, run_sessions_and_server
from workers import figures


def run_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    run = run_get(org=viewer_org(request), run_id=run_id)
    if run is None:
        raise Http404("No such run")
    points = list(run_points(run=run))
    if request.GET.get("format") == "csv":
        return csv_download(f"run-{run.pk}-points.csv", _points_table(run, points))
    marks = run_selectors.run_point_marks(run=run)
    for p in points:
        p.marks = marks.get(p.ordinal, [])
        # The latency cell, as the board shows it ("TTFT p50 / p99").
        p.latency = [getattr(p, f.column) for f in map(figures.figure, figures.BOARD_LATENCY)]
        # Over every GPU the deployment deployed (both pools of a disaggregated one).
        p.output_tok_s_per_gpu = figures.per_gpu(p.output_tok_s, run.deployment.gpus)
    latency = run_selectors.run_latency_series(run=run)
    tier = request.GET.get("tier") or "owning_hyperscaler"
    asked = asked_price_set(request.GET)
    sheet = price_sheet(request)
    basis = (
        request.GET.get("basis") if request.GET.get("basis") in BASES else TokenKind.OUTPUT.value
    )
    verdicts = run_selectors.point_verdicts(run=run)
    for point in points:
        point.slo_verdict = verdicts.get(point.pk, "")
        point.percentile_method = (point.latency_ms.get("ttft") or {}).get("method", "")
    beyond = run_sessions_and_server(run=run)
    # The server's series on the client's timeline: one chart per level that has them.
    scraped = [b for b in beyond if b["series"]]
    in_flight = run_selectors.run_in_flight(run=run, ordinals=[b["ordinal"] for b in scraped])
    for b in scraped:
        b["timeline"] = charts.server_timeline_figure(
            b["series"],
            in_flight.get(b["ordinal"]),
            title=f"{b['label']}: the server and the client over time",
        )
        b["chart_id"], b["figure_id"] = f"chart-server-{b['ordinal']}", f"fig-server-{b['ordinal']}"
    context = {
        "run": run,
        "points": points,
        "leaderboard_point": run_selectors.run_leaderboard_point(
            run=run, tier=tier, basis=basis, own=sheet.pairs(), prices_as_of=asked.value
        ),
        "price_sheet": sheet,
        "price_set": asked.price_set,
        "price_problem": asked.problem,
        "tiers": selectors.price_tiers(),
        "tier": tier,
        "basis": basis,
        "bases": BASES,
        "errors": run_selectors.run_errors(run=run),
        # "succeeded" means the run finished; the page says how many requests did not.
        "worst_success": min(
            (p.success_rate for p in points if p.success_rate is not None), default=None
        ),
        "records": sum(len(v) for v in latency.values()) > 0,
        "cdf": charts.cdf_figure(
            latency, title="Latency distribution per load level", x_title="ms"
        ),
        "accuracy": list(run.accuracy_results.all()),
        "may_publish": may_publish(request, run),
        "beyond": beyond,
    }
    return render(request, "leaderboard/run_detail.html", context)


def _points_table(run: Run, points: list) -> list[dict[str, Any]]:
    gpus = run.deployment.gpus
    return [
        {
            "level": p.label or "",
            "concurrency": p.concurrency,
            "request_rate": p.request_rate,
            "output_tok_s": p.output_tok_s,
            "output_tok_s_per_gpu": figures.per_gpu(p.output_tok_s, gpus),
            "total_tok_s": p.total_tok_s,
            "unlabelled_tok_s": p.unlabelled_tok_s,
            **{f.column: getattr(p, f.column) for f in map(figures.figure, figures.RUN_POINTS)},
            "success_rate": p.success_rate,
            "prefix_cache_hit_rate": p.prefix_cache_hit_rate,
        }
        for p in points
    ]


def deployment_detail(request: HttpRequest, deployment_id: int) -> HttpResponse:
    org = viewer_org(request)
    deployment = deployment_selectors.deployment_get(deployment_id=deployment_id, org=org)
    if deployment is None:
        raise Http404("No such deployment")
    history = deployment_selectors.deployment_history(deployment=deployment, org=org)
    if request.GET.get("format") == "csv":
        return csv_download(f"deployment-{deployment.pk}-history.csv", history)
    context = {
        "deployment": deployment,
        "facts": fairness.deployment_facts(deployment),
        "history": history,
        "history_chart": charts.history_figure(
            history, title="Each run's leaderboard point: output tok/s per GPU at the SLO"
        ),
        "accuracy": deployment_selectors.accuracy_for(deployment=deployment, org=org),
    }
    return render(request, "leaderboard/deployment_detail.html", context)
