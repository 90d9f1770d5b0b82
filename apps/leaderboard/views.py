import csv
import json
from collections import Counter
from typing import Any

from django.core.cache import cache
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render
from django.utils.cache import patch_cache_control

from apps.accuracy import selectors as accuracy_selectors
from apps.accuracy.models import AccuracyResult
from apps.catalog.models import PublishedFigure, Scenario
from apps.costs.formulas import CostInputError, TokenKind
from apps.csv_safe import safe_rows
from apps.leaderboard import charts, fairness, selectors, story
from apps.leaderboard.methodology import methodology_html
from apps.runs.models import Run
from apps.runs.selectors import RunFilters, run_get, run_points, runs_filtered, runs_visible
from apps.runs.services import runs_version

PUBLIC_MAX_AGE = 60
BASES = [kind.value for kind in TokenKind]


def _int(value: str | None, default: int) -> int:
    try:
        return int(value) if value else default
    except ValueError:
        return default


def board_from_query(query: QueryDict, models: list[str]) -> selectors.Board:
    model = query.get("model") or (models[0] if models else None)
    scenario = query.get("scenario")
    if not scenario:
        candidates = selectors.scenarios_with_runs().filter(runs__deployment__model__name=model)
        first = candidates.order_by("-is_preset", "slug").first()
        scenario = first.slug if first else None
    return selectors.Board(
        model=model,
        scenario=scenario,
        tier=query.get("tier") or "owning_hyperscaler",
        accelerator=query.get("accelerator") or None,
        quantization=query.get("quantization") or None,
        include_simulated=query.get("simulated") in {"1", "on", "true"},
        sort=query.get("sort") if query.get("sort") in selectors.SORTS else "throughput",
        page=_int(query.get("page"), 1),
        rule=query.get("rule") if query.get("rule") in selectors.RUN_RULES else "latest",
        days=max(1, _int(query.get("days"), selectors.DEFAULT_BEST_DAYS)),
        basis=query.get("basis") if query.get("basis") in BASES else TokenKind.OUTPUT.value,
    )


# Query parameters the leaderboard reads. A URL with any other is rendered but never stored,
# so `/?x=<unique>` cannot fill the cache (which shares Redis with the job broker).
CACHED_PARAMS = frozenset(
    {"model", "scenario", "tier", "accelerator", "quantization", "simulated", "sort", "page"}
    | {"y", "all", "format"}
)


CACHED_MAX_PAGE = 100
_FLAGS = frozenset({"", "0", "1", "on", "off", "true", "false"})
_CHOICES = {
    "sort": selectors.SORTS,
    "y": charts.Y_AXES,
    "format": {"csv", "json"},
    "simulated": _FLAGS,
    "all": _FLAGS,
}


def _cacheable(query: QueryDict) -> bool:
    """Only URLs the page can tell apart get a cache key: known parameters, each once, with a
    value the page accepts (a slug that names a public run, a choice, a bounded page), so
    `/?model=<random>` is rendered but stores nothing and the key count stays bounded."""
    if not set(query) <= CACHED_PARAMS or any(len(query.getlist(k)) != 1 for k in query):
        return False
    for name, choices in _CHOICES.items():
        if name in query and query[name] not in choices:
            return False
    page = query.get("page", "1")
    if not (page.isdigit() and 1 <= int(page) <= CACHED_MAX_PAGE):
        return False
    if "tier" in query and query["tier"] not in selectors.price_tiers():
        return False
    slugs = {k: query.get(k) or None for k in ("model", "scenario", "accelerator", "quantization")}
    return runs_filtered(org=None, filters=RunFilters(**slugs)).exists()


def _cached(request: HttpRequest, build) -> HttpResponse:
    """Public pages are cached per URL until the next run lands (the version changes). They
    carry nothing of the visitor's (no CSRF token: static/js/csrf.js reads the cookie)."""
    if not _cacheable(request.GET):
        return build()
    key = f"page:{runs_version()}:{int(bool(request.htmx))}:{request.get_full_path()}"
    response = cache.get(key)
    if response is None:
        response = build()
        if response.status_code == 200 and not response.cookies:
            cache.set(key, response, PUBLIC_MAX_AGE * 10)
    patch_cache_control(response, public=True, max_age=PUBLIC_MAX_AGE)
    return response


def leaderboard(request: HttpRequest) -> HttpResponse:
    """One row per deployment for a model and scenario; HTMX gets only the board partial."""
    return _cached(request, lambda: _leaderboard(request))


def _board_charts(
    board: selectors.Board, page: selectors.BoardPage, query: QueryDict
) -> dict[str, Any]:
    y = query.get("y") if query.get("y") in charts.Y_AXES else "tput_per_gpu"
    optimal = query.get("all") not in {"1", "on", "true"}
    points = selectors.chart_points(run_ids=page.run_ids, tier=board.tier, basis=board.basis)
    return {
        "y": y,
        "optimal_only": optimal,
        "pareto_interactivity": charts.pareto_figure(
            points,
            x="interactivity",
            y=y,
            optimal_only=optimal,
            title="vs interactivity",
            basis=board.basis,
        ),
        "pareto_latency": charts.pareto_figure(
            points,
            x="e2el_s",
            y=y,
            optimal_only=optimal,
            title="vs end-to-end latency",
            basis=board.basis,
        ),
    }


def _leaderboard(request: HttpRequest) -> HttpResponse:
    models = selectors.model_names()
    board = board_from_query(request.GET, models)
    page = selectors.leaderboard_rows(board=board)
    if request.GET.get("format") == "csv":
        return _csv("leaderboard.csv", _board_table(page.rows))
    if request.GET.get("format") == "json":
        return _json_download("leaderboard.json", _board_table(page.rows))
    context = {
        "board": board,
        "page": page,
        "models": models,
        "scenarios": selectors.scenarios_with_runs(),
        "bases": BASES,
        "query": request.GET.urlencode(),
        **_board_charts(board, page, request.GET),
    }
    template = "leaderboard/leaderboard.html"
    return render(request, f"{template}#board" if request.htmx else template, context)


def _board_table(rows: list[selectors.Row]) -> list[dict[str, Any]]:
    return [
        {
            "deployment": row.label,
            "provenance": row.provenance,
            "tok_s_per_gpu": row.tput_per_gpu,
            "tok_s_kind": row.tput_kind,
            "tok_s_per_gpu_range": (
                f"{row.tput_range[0]:.6g}-{row.tput_range[1]:.6g}" if row.tput_range else ""
            ),
            "meets_slo": row.meets_slo,
            "interactivity_tok_s_user_p50": row.interactivity,
            "ttft_p50_ms": row.ttft_p50_ms,
            "ttft_p99_ms": row.ttft_p99_ms,
            "success_rate": row.success_rate,
            "accuracy": row.accuracy["score"] if row.accuracy else None,
            "usd_per_gpu_hour": row.usd_per_gpu_hour,
            "token_basis": row.basis,
            f"usd_per_mtok_{row.basis}": row.usd_per_mtok,
            "usd_per_mtok_range": (
                f"{row.usd_range[0]:.6g}-{row.usd_range[1]:.6g}" if row.usd_range else ""
            ),
            "run_id": row.run_id,
            "run_date": row.run_date.isoformat() if row.run_date else None,
        }
        for row in rows
    ]


def _csv(filename: str, rows: list[dict[str, Any]]) -> HttpResponse:
    response = HttpResponse(content_type="text/csv")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    if rows:
        writer = csv.DictWriter(response, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(safe_rows(rows))
    return response


def _json_download(filename: str, rows: list[dict[str, Any]]) -> HttpResponse:
    response = HttpResponse(json.dumps(rows, indent=2), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def run_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    run = run_get(org=None, run_id=run_id)
    if run is None:
        raise Http404("No such run")
    points = list(run_points(run=run))
    if request.GET.get("format") == "csv":
        return _csv(f"run-{run.pk}-points.csv", _points_table(run, points))
    marks = selectors.run_point_marks(run=run)
    for p in points:
        p.marks = marks.get(p.ordinal, [])
    latency = selectors.run_latency_series(run=run)
    tier = request.GET.get("tier") or "owning_hyperscaler"
    basis = (
        request.GET.get("basis") if request.GET.get("basis") in BASES else TokenKind.OUTPUT.value
    )
    verdicts = selectors.point_verdicts(run=run)
    for point in points:
        point.slo_verdict = verdicts.get(point.pk, "")
        point.percentile_method = (point.latency_ms.get("ttft") or {}).get("method", "")
    context = {
        "run": run,
        "points": points,
        "leaderboard_point": selectors.run_leaderboard_point(run=run, tier=tier, basis=basis),
        "tiers": selectors.price_tiers(),
        "tier": tier,
        "basis": basis,
        "bases": BASES,
        "errors": selectors.run_errors(run=run),
        "records": sum(len(v) for v in latency.values()) > 0,
        "cdf": charts.cdf_figure(
            latency, title="Latency distribution per load level", x_title="ms"
        ),
        "accuracy": list(run.accuracy_results.all()),
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
            "output_tok_s_per_gpu": p.output_tok_s / gpus if p.output_tok_s else None,
            "total_tok_s": p.total_tok_s,
            "unlabelled_tok_s": p.unlabelled_tok_s,
            "ttft_p50_ms": p.ttft_p50_ms,
            "ttft_p99_ms": p.ttft_p99_ms,
            "tpot_p50_ms": p.tpot_p50_ms,
            "e2el_p99_ms": p.e2el_p99_ms,
            "interactivity_p50": p.interactivity_p50,
            "success_rate": p.success_rate,
            "prefix_cache_hit_rate": p.prefix_cache_hit_rate,
        }
        for p in points
    ]


def deployment_detail(request: HttpRequest, deployment_id: int) -> HttpResponse:
    deployment = selectors.deployment_get(deployment_id=deployment_id)
    if deployment is None:
        raise Http404("No such deployment")
    history = selectors.deployment_history(deployment=deployment)
    if request.GET.get("format") == "csv":
        return _csv(f"deployment-{deployment.pk}-history.csv", history)
    context = {
        "deployment": deployment,
        "facts": selectors.deployment_facts(deployment),
        "history": history,
        "history_chart": charts.history_figure(
            history, title="Each run's leaderboard point: output tok/s per GPU at the SLO"
        ),
        "accuracy": selectors.accuracy_for(deployment=deployment),
    }
    return render(request, "leaderboard/deployment_detail.html", context)


def compare(request: HttpRequest) -> HttpResponse:
    ids = list(dict.fromkeys(_int(v, 0) for v in request.GET.getlist("d")))[:4]
    deployments = [d for i in ids if (d := selectors.deployment_get(deployment_id=i))]
    if len(deployments) < 2:
        return render(
            request,
            "leaderboard/compare.html",
            {"error": "Pick 2 to 4 deployments to compare (add ?d=ID&d=ID to the URL)."},
            status=400,
        )
    scenario_slug = request.GET.get("scenario") or _common_scenario([d.pk for d in deployments])
    tier = request.GET.get("tier") or "owning_hyperscaler"
    basis = (
        request.GET.get("basis") if request.GET.get("basis") in BASES else TokenKind.OUTPUT.value
    )
    board = selectors.Board(
        scenario=scenario_slug,
        tier=tier,
        deployments=tuple(d.pk for d in deployments),
        include_simulated=True,
        basis=basis,
    )
    board_page = selectors.leaderboard_rows(board=board)
    rows = {r.deployment_id: r for r in board_page.rows}
    ordered = [rows.get(d.pk) for d in deployments]
    facts = [selectors.deployment_facts(d) for d in deployments]
    for fact, row in zip(facts, ordered, strict=True):
        fact["provenance"] = row.provenance if row else "no run in this scenario"
        fact["scenario"] = scenario_slug if row else "—"
    baseline = ordered[0]
    ratios = [
        (r.tput_per_gpu / baseline.tput_per_gpu)
        if r and baseline and r.tput_per_gpu and baseline.tput_per_gpu
        else None
        for r in ordered
    ]
    cost_ratios = [
        (r.usd_per_mtok / baseline.usd_per_mtok)
        if r and baseline and r.usd_per_mtok and baseline.usd_per_mtok
        else None
        for r in ordered
    ]
    diffs = fairness.differences(facts)
    deltas = _accuracy_deltas(deployments)
    if request.GET.get("format") in {"csv", "json"}:
        table = _board_table([r for r in ordered if r])
        for entry, ratio in zip(table, ratios, strict=False):
            entry["throughput_ratio_vs_first"] = ratio
        if request.GET["format"] == "csv":
            return _csv("compare.csv", table)
        return _json_download("compare.json", table)
    points = selectors.chart_points(run_ids=board_page.run_ids, tier=tier, basis=basis)
    context = {
        "deployments": deployments,
        "columns": list(zip(deployments, ordered, ratios, cost_ratios, facts, strict=True)),
        "differences": diffs,
        "unfair": any(d.unfair for d in diffs),
        "accuracy_deltas": deltas,
        "scenario": Scenario.objects.filter(slug=scenario_slug).first(),
        "scenarios": Scenario.objects.filter(runs__deployment__in=deployments).distinct(),
        "tier": tier,
        "basis": basis,
        "slo_text": board_page.slo_text,
        "tiers": selectors.price_tiers(),
        "query": request.GET.urlencode(),
        "chart": charts.pareto_figure(
            points,
            x="interactivity",
            y="tput_per_gpu",
            optimal_only=False,
            title="Overlaid",
            basis=basis,
        ),
    }
    return render(request, "leaderboard/compare.html", context)


def _common_scenario(deployment_ids: list[int]) -> str | None:
    counts = Counter(
        runs_visible(org=None)
        .filter(deployment_id__in=deployment_ids, scenario__isnull=False)
        .order_by()
        .values_list("scenario__slug", "deployment_id")
        .distinct()
    )
    per_scenario = Counter(slug for slug, _ in counts)
    return per_scenario.most_common(1)[0][0] if per_scenario else None


def _accuracy_deltas(deployments) -> list[fairness.AccuracyDelta]:
    """Each task both sides scored: paired through the one comparison /accuracy/compare/
    uses when both have per-item outcomes, else an unpaired interval (never across protocols)."""
    base = {a["task"]: a for a in selectors.accuracy_for(deployment=deployments[0])}
    deltas = []
    for other in deployments[1:]:
        for result in selectors.accuracy_for(deployment=other):
            if result["task"] not in base:
                continue
            a, labels = (
                base[result["task"]],
                {
                    "baseline_label": deployments[0].quant_weights,
                    "candidate_label": other.quant_weights,
                },
            )
            if a["items"] and result["items"]:
                stored = AccuracyResult.objects.in_bulk([a["result_id"], result["result_id"]])
                view = accuracy_selectors.paired_comparison(
                    baseline=stored[a["result_id"]],
                    candidate=stored[result["result_id"]],
                    margin_points=accuracy_selectors.DEFAULT_MARGIN_POINTS,
                )
                delta = fairness.paired_delta(
                    view.comparison,
                    view.error,
                    task=result["task"],
                    text=view.difference_text,
                    **labels,
                )
            else:
                delta = fairness.accuracy_delta(a, result, **labels)
            if delta:
                deltas.append(delta)
    return deltas


def story_glm(request: HttpRequest) -> HttpResponse:
    figures = {f.key: f for f in PublishedFigure.objects.all()}
    try:
        context = story.glm_story(
            figures={k: f.payload for k, f in figures.items()},
            prices=selectors.reference_price_book(),
        )
    except (KeyError, CostInputError) as exc:
        raise Http404(f"reference data incomplete: {exc}") from exc
    context["citations"] = sorted({f.citation for f in figures.values()})
    context["timeline_chart"] = charts.bar_figure(
        context["timeline_labels"],
        context["timeline_values"],
        title="GLM 5.2 on 8×MI355X: per-node tok/s as published",
        y_title="tok/s per node (kind unstated)",
    )
    return render(request, "leaderboard/story.html", context)


def methodology(request: HttpRequest) -> HttpResponse:
    """docs/methodology.md, rendered: every number's heading on the pages links here."""
    response = render(request, "leaderboard/methodology.html", {"body": methodology_html()})
    patch_cache_control(response, public=True, max_age=PUBLIC_MAX_AGE)
    return response
