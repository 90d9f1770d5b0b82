import csv
import dataclasses
import json
from collections import Counter
from dataclasses import replace
from datetime import date
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.core.cache import cache
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render
from django.views.decorators.csp import csp_override

from apps.accounts.models import Organization
from apps.accounts.scoping import current_org, may_publish, viewer_org
from apps.accuracy import selectors as accuracy_selectors
from apps.accuracy.models import AccuracyResult
from apps.catalog.models import PublishedFigure, Scenario
from apps.catalog.selectors import scenario_list
from apps.costs.formulas import CostInputError, TokenKind
from apps.costs.prices import price_sheet
from apps.csv_safe import safe_rows
from apps.htmx import page_or_partial, wants_partial
from apps.leaderboard import charts, fairness, selectors, story
from apps.leaderboard.methodology import methodology_html
from apps.leaderboard.story import CLAIMED_COST_RATIO, PUBLISHED_THROUGHPUT_RATIO
from apps.leaderboard.templatetags.frame import label
from apps.projections import selectors as projection_selectors
from apps.runs import significance as run_significance
from apps.runs.models import Run
from apps.runs.selectors import (
    run_facets,
    run_get,
    run_points,
    run_sessions_and_server,
    runs_visible,
)
from apps.runs.services import runs_version

PUBLIC_MAX_AGE = 60
BASES = [kind.value for kind in TokenKind]


def _int(value: str | None, default: int) -> int:
    try:
        return int(value) if value else default
    except ValueError:
        return default


# The visible label of each query field, so a message names what the reader sees.
FIELD_LABELS = {
    "model": "Model",
    "scenario": "Scenario",
    "tier": "Price tier",
    "sort": "Sort",
    "rule": "Rows show",
    "days": "N days",
    "basis": "Token basis",
    "y": "Chart y",
    "series": "Chart series",
    "page": "Page",
    "accelerator": "Accelerators",
    "engine": "Engines",
    "quantization": "Quantizations",
    "serving": "Serving",
    "since": "Runs from",
    "until": "Runs until",
}
FACETS = ("accelerator", "engine", "quantization", "serving")


def _date(value: str | None) -> date | None:
    try:
        return date.fromisoformat(value) if value else None
    except ValueError:
        return None


def query_problems(
    query: QueryDict, *, models: list[str], tiers: list[str], org: Organization | None
) -> list[dict]:
    """Unknown or out-of-range filter values, each with its query field and visible label;
    the page shows them and falls back to the default, the CSV/JSON forms answer 400."""
    problems = []

    def bad(field: str, message: str) -> None:
        problems.append({"field": field, "label": FIELD_LABELS[field], "message": message})

    def one_of(field: str, allowed) -> None:
        value = query.get(field)
        if value and value not in allowed:
            shown = ", ".join(label(a) for a in allowed)
            bad(field, f"“{value}” is not a choice here (choices: {shown}); showing the default.")

    one_of("model", models)
    one_of("tier", tiers)
    one_of("sort", selectors.SORTS)
    one_of("rule", selectors.RUN_RULES)
    one_of("basis", BASES)
    one_of("y", charts.Y_AXES)
    one_of("series", charts.SERIES)
    for field in ("days", "page"):
        value = query.get(field)
        if value and (not value.isdigit() or int(value) < 1):
            bad(field, f"“{value}” is not a whole number of at least 1; showing the default.")
    scenario = query.get("scenario")
    if scenario and not selectors.scenarios_with_runs(org=org).filter(slug=scenario).exists():
        bad("scenario", f"“{scenario}” is not a known scenario; showing the model's first one.")
    facets = run_facets(org=org)
    for field in FACETS:
        unknown = [v for v in query.getlist(field) if v and v not in facets[field]]
        if unknown:
            bad(field, f"no run has {', '.join(unknown)}; ignored.")
    for field in ("since", "until"):
        if query.get(field) and _date(query.get(field)) is None:
            bad(field, f"“{query.get(field)}” is not a date like 2026-11-30; ignored.")
    return problems


def board_from_query(
    query: QueryDict, models: list[str], org: Organization | None = None
) -> selectors.Board:
    model = query.get("model") if query.get("model") in models else None
    scenario = query.get("scenario")
    if scenario and not selectors.scenarios_with_runs(org=org).filter(slug=scenario).exists():
        scenario = None
    if model is None or not scenario:
        # The widest view of the model asked for (or of any model): most accelerators.
        views = [v for v in selectors.widest_views(org=org) if model in (None, v[0])]
        if views:
            model = model or views[0][0]
            scenario = scenario or next((s for m, s in views if m == model), None)
    model = model or (models[0] if models else None)
    if not scenario:
        candidates = selectors.scenarios_with_runs(org=org).filter(
            runs__deployment__model__name=model
        )
        first = candidates.order_by("-is_preset", "slug").first()
        scenario = first.slug if first else None
    return selectors.Board(
        model=model,
        scenario=scenario,
        tier=_tier(query.get("tier")),
        accelerators=tuple(v for v in query.getlist("accelerator") if v),
        engines=tuple(v for v in query.getlist("engine") if v),
        quantizations=tuple(v for v in query.getlist("quantization") if v),
        servings=tuple(v for v in query.getlist("serving") if v),
        since=_date(query.get("since")),
        until=_date(query.get("until")),
        include_simulated=query.get("simulated") in {"1", "on", "true"},
        origins=tuple(v for v in query.getlist("origin") if v in Run.Origin.values),
        include_unchecked=query.get("unchecked") in {"1", "on", "true"},
        official=query.get("official") in {"1", "on", "true"},
        sort=query.get("sort") if query.get("sort") in selectors.SORTS else "throughput",
        page=_int(query.get("page"), 1),
        rule=query.get("rule") if query.get("rule") in selectors.RUN_RULES else "latest",
        days=max(1, _int(query.get("days"), selectors.DEFAULT_BEST_DAYS)),
        basis=query.get("basis") if query.get("basis") in BASES else TokenKind.OUTPUT.value,
    )


def _tier(value: str | None) -> str:
    return value if value and value in selectors.price_tiers() else "owning_hyperscaler"


def _bad_query(problems: list[dict]) -> HttpResponse:
    """400 for the CSV/JSON forms: each problem names its query field and visible label."""
    return HttpResponse(
        json.dumps({"errors": problems}, ensure_ascii=False),
        status=400,
        content_type="application/json",
    )


# Query parameters the leaderboard reads. A URL with any other is rendered but never stored,
# so `/?x=<unique>` cannot fill the cache (which shares Redis with the job broker).
CACHED_PARAMS = frozenset(FIELD_LABELS) | {"simulated", "all", "format", "private", "unofficial"}


CACHED_MAX_INT = 100  # page and days: larger values are rendered, never stored
CACHED_SINCE = date(2020, 1, 1)
_FLAGS = frozenset({"", "0", "1", "on", "off", "true", "false"})
_CHOICES = {
    "format": {"csv", "json"},
    "simulated": _FLAGS,
    "all": _FLAGS,
    "private": _FLAGS,
    "unofficial": _FLAGS,
}
# The board's opt-in projections (apps/projections): a flag like "simulated".
CACHED_PARAMS |= {"projected"}
_CHOICES["projected"] = _FLAGS


def _cacheable(query: QueryDict) -> bool:
    """Only URLs the page can tell apart get a cache key: known parameters, each once (facets
    without repeats), with values the page accepts (query_problems finds none, ints and dates
    bounded), so `/?model=<random>` is rendered but stores nothing: the key count is bounded."""
    if not set(query) <= CACHED_PARAMS:
        return False
    for name in query:
        values = query.getlist(name)
        if len(values) != (len(set(values)) if name in FACETS else 1):
            return False
    for name, choices in _CHOICES.items():
        if name in query and query[name] not in choices:
            return False
    for name in ("page", "days"):
        if not query.get(name, "1").isdigit() or int(query.get(name, "1")) > CACHED_MAX_INT:
            return False
    for name in ("since", "until"):
        day = _date(query.get(name))
        if query.get(name) and (day is None or not CACHED_SINCE <= day <= date.today()):
            return False
    models, tiers = selectors.model_names(), selectors.price_tiers()
    return not query_problems(query, models=models, tiers=tiers, org=None)


def _cached(request: HttpRequest, build) -> HttpResponse:
    """Public pages are cached per URL until the next run lands (the version changes).
    Public pages carry nothing of the visitor's (no CSRF token: static/js/csrf.js reads the
    cookie). Pages for signed-in people are never cached: they carry the person's menu and
    may show their organization's private runs."""
    if request.user.is_authenticated:
        return build()  # apps.http_cache marks it private, no-store
    if not _cacheable(request.GET):
        return build()
    key = f"page:{runs_version()}:{int(wants_partial(request))}:{request.get_full_path()}"
    response = cache.get(key)
    if response is None:
        response = build()
        if response.status_code == 200 and not response.cookies:
            cache.set(key, response, PUBLIC_MAX_AGE * 10)
    return response  # its Cache-Control and validators: apps.http_cache


def leaderboard(request: HttpRequest) -> HttpResponse:
    """One row per deployment for a model and scenario; HTMX gets only the board partial."""
    return _cached(request, lambda: _leaderboard(request, viewer_org(request)))


def _board_charts(
    board: selectors.Board, page: selectors.BoardPage, query: QueryDict
) -> dict[str, Any]:
    y = query.get("y") if query.get("y") in charts.Y_AXES else "tput_per_gpu"
    series = query.get("series") if query.get("series") in charts.SERIES else "group"
    optimal = query.get("all") not in {"1", "on", "true"}
    metric = charts.Y_AXES[y][0].split(" (")[0].format(basis=board.basis)
    points = selectors.chart_points(
        run_ids=page.run_ids, tier=board.tier, basis=board.basis, own=board.own_prices
    )
    return {
        "y": y,
        "series": series,
        "series_choices": charts.SERIES,
        "series_label": charts.SERIES[series],
        "optimal_only": optimal,
        "pareto_interactivity": charts.pareto_figure(
            points,
            x="interactivity",
            y=y,
            optimal_only=optimal,
            title=f"{metric} vs interactivity",
            basis=board.basis,
            series=series,
        ),
        "pareto_latency": charts.pareto_figure(
            points,
            x="e2el_s",
            y=y,
            optimal_only=optimal,
            title=f"{metric} vs latency",
            basis=board.basis,
            series=series,
        ),
    }


def _add_projection(
    context: dict[str, Any], board: selectors.Board, page: selectors.BoardPage, query: QueryDict
) -> None:
    """Opt-in (?projected=1): the projected curves of this view, dashed with their band on
    the interactivity chart. Never a row, so never ranked."""
    context["show_projected"] = query.get("projected") in {"1", "on", "true"}
    if not context["show_projected"]:
        return
    projection = projection_selectors.board_projection(model=board.model, scenario=page.scenario)
    context["projection"] = projection
    if projection is None or context["y"] != "tput_per_gpu":
        return
    figure = context["pareto_interactivity"]
    if figure.pop("empty", None):  # nothing measured to draw: the projection alone, with axes
        layout = figure.setdefault("layout", {})
        layout["xaxis"] = {"title": {"text": charts.X_AXES["interactivity"][0]}}
        y_title = charts.Y_AXES["tput_per_gpu"][0].format(basis=board.basis)
        layout["yaxis"] = {"title": {"text": y_title}, "rangemode": "tozero"}
    figure["data"] = [
        *figure["data"],
        *projection_selectors.projected_traces(projection, basis=board.basis),
    ]


def _leaderboard(request: HttpRequest, org: Organization | None) -> HttpResponse:
    models = selectors.model_names(org=org)
    problems = query_problems(request.GET, models=models, tiers=selectors.price_tiers(), org=org)
    if problems and request.GET.get("format") in {"csv", "json"}:
        return _bad_query(problems)
    board = board_from_query(request.GET, models, org)
    sheet = price_sheet(request)  # the one price reader (apps.costs.prices)
    board = replace(board, own_prices=sheet.pairs(), price_profile=sheet.profile)
    page = selectors.leaderboard_rows(board=board, org=org)
    if request.GET.get("format") == "csv":
        return _csv("leaderboard.csv", _board_table(page.rows))
    if request.GET.get("format") == "json":
        return _json_download("leaderboard.json", _board_table(page.rows))
    context = {
        "board": board,
        "page": page,
        "models": models,
        "scenarios": selectors.scenarios_with_runs(org=org),
        "bases": BASES,
        "query": request.GET.urlencode(),
        "private_org": current_org(request),
        "showing_private": org is not None,
        "unsorted_query": _without(request.GET, "sort", "page"),
        "facets": run_facets(org=org),
        "problems": problems,
        "embed_query": _without(request.GET, "page", "format"),
        "imported": selectors.imported_sources(run_ids=page.run_ids),
        **_board_charts(board, page, request.GET),
    }
    _add_projection(context, board, page, request.GET)
    if request.GET.get("unofficial") in {"1", "on", "true"}:
        context.update(_unofficial_overlay(board, context, org))
    if not wants_partial(request):
        context["headline"] = _headline(org)
    return page_or_partial(request, "leaderboard/leaderboard.html", "board", context)


def _unofficial_overlay(
    board: selectors.Board, context: dict[str, Any], org: Organization | None
) -> dict[str, Any]:
    """The same board's labelled unofficial runs (CI trials of a branch or pull request),
    for a table of their own and hollow markers over the charts: beside the official rows,
    never ranked among them."""
    overlay = selectors.leaderboard_rows(
        board=dataclasses.replace(board, unofficial=True, page=1), org=org
    )
    names = {row.run_id: row.labels_text for row in overlay.ranked}
    points = selectors.chart_points(run_ids=overlay.run_ids, tier=board.tier, basis=board.basis)
    for key, x in (("pareto_interactivity", "interactivity"), ("pareto_latency", "e2el_s")):
        charts.add_unofficial_overlay(context[key], points, x=x, y=context["y"], labels=names)
    return {"unofficial_rows": overlay.ranked}


HEADLINE_SKUS = ("MI355X", "B200")


def _headline(org: Organization | None) -> dict[str, Any] | None:
    """The question the site was started for, answered where the data allows: the two
    accelerators side by side, like for like, in the widest view that has both."""
    for model, scenario in selectors.widest_views(org=org)[:5]:
        pairs = selectors.like_for_like_pairs(
            org=org, model=model, scenario=scenario, skus=HEADLINE_SKUS
        )
        if pairs:
            return {"pair": pairs[0], "model": model, "scenario": scenario}
    return None


def _without(query: QueryDict, *fields: str) -> str:
    """The query string less some fields (a sort link replaces the sort, keeping filters)."""
    kept = query.copy()
    for field in fields:
        kept.pop(field, None)
    return kept.urlencode()


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
            "origin": row.origin,
            "rules_failed": " ".join(f["rule"] for f in row.rules_failed),
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
    run = run_get(org=viewer_org(request), run_id=run_id)
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
    sheet = price_sheet(request)
    basis = (
        request.GET.get("basis") if request.GET.get("basis") in BASES else TokenKind.OUTPUT.value
    )
    verdicts = selectors.point_verdicts(run=run)
    for point in points:
        point.slo_verdict = verdicts.get(point.pk, "")
        point.percentile_method = (point.latency_ms.get("ttft") or {}).get("method", "")
    beyond = run_sessions_and_server(run=run)
    # The server's series on the client's timeline: one chart per level that has them.
    scraped = [b for b in beyond if b["series"]]
    in_flight = selectors.run_in_flight(run=run, ordinals=[b["ordinal"] for b in scraped])
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
        "leaderboard_point": selectors.run_leaderboard_point(
            run=run, tier=tier, basis=basis, own=sheet.pairs()
        ),
        "price_sheet": sheet,
        "tiers": selectors.price_tiers(),
        "tier": tier,
        "basis": basis,
        "bases": BASES,
        "errors": selectors.run_errors(run=run),
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
    org = viewer_org(request)
    deployment = selectors.deployment_get(deployment_id=deployment_id, org=org)
    if deployment is None:
        raise Http404("No such deployment")
    history = selectors.deployment_history(deployment=deployment, org=org)
    if request.GET.get("format") == "csv":
        return _csv(f"deployment-{deployment.pk}-history.csv", history)
    context = {
        "deployment": deployment,
        "facts": selectors.deployment_facts(deployment),
        "history": history,
        "history_chart": charts.history_figure(
            history, title="Each run's leaderboard point: output tok/s per GPU at the SLO"
        ),
        "accuracy": selectors.accuracy_for(deployment=deployment, org=org),
    }
    return render(request, "leaderboard/deployment_detail.html", context)


def compare(request: HttpRequest, embed: bool = False) -> HttpResponse:
    ids = list(dict.fromkeys(_int(v, 0) for v in request.GET.getlist("d")))[:4]
    # An embed is public by nature (framed anywhere, cached publicly): public runs only.
    org = None if embed else viewer_org(request)
    deployments = [d for i in ids if (d := selectors.deployment_get(deployment_id=i, org=org))]
    picker = _compare_picker(deployments, org)
    if len(deployments) < 2:
        # 400 keeps scripts honest; a person gets the picker to add what is missing.
        return render(
            request,
            "leaderboard/compare.html",
            {
                "error": (
                    "Pick 2 to 4 deployments to compare: add them below, or tick them in the "
                    "leaderboard's Compare column."
                ),
                **picker,
            },
            status=400,
        )
    scenario_slug = request.GET.get("scenario") or _common_scenario(
        [d.pk for d in deployments], org
    )
    tier = _tier(request.GET.get("tier"))
    sheet = price_sheet(request)  # the one price reader (apps.costs.prices)
    basis = (
        request.GET.get("basis") if request.GET.get("basis") in BASES else TokenKind.OUTPUT.value
    )
    board = selectors.Board(
        scenario=scenario_slug,
        tier=tier,
        deployments=tuple(d.pk for d in deployments),
        include_simulated=True,
        # A comparison the visitor asked for shows each deployment's run, checked or not
        # (its rows say which origin and which rules failed).
        include_unchecked=True,
        basis=basis,
        own_prices=sheet.pairs(),
        price_profile=sheet.profile,
    )
    board_page = selectors.leaderboard_rows(board=board, org=org)
    rows = {r.deployment_id: r for r in board_page.rows}
    ordered = [rows.get(d.pk) for d in deployments]
    facts = [selectors.deployment_facts(d) for d in deployments]
    for fact, row in zip(facts, ordered, strict=True):
        fact["provenance"] = row.provenance if row else "no run in this scenario"
        fact["scenario"] = scenario_slug if row else "—"
    baseline = ordered[0]

    def stated(row: selectors.Row | None) -> bool:
        # A ratio to or from a figure of unstated kind would pick one of its two readings.
        return row is not None and row.tput_range is None

    ratios = [
        (r.tput_per_gpu / baseline.tput_per_gpu)
        if stated(r) and stated(baseline) and r.tput_per_gpu and baseline.tput_per_gpu
        else None
        for r in ordered
    ]
    cost_ratios = [
        (r.usd_per_mtok / baseline.usd_per_mtok)
        if stated(r) and stated(baseline) and r.usd_per_mtok and baseline.usd_per_mtok
        else None
        for r in ordered
    ]
    diffs = fairness.differences(facts)
    for d, fact in zip(deployments, facts, strict=True):
        # Added after the fairness check: presentation, not facts to compare.
        fact["name"] = picker["names"][d.pk]
        fact["remove"] = picker["removal"][d.pk]
    deltas = _accuracy_deltas(deployments, org)
    speculation = selectors.runs_speculation(run_ids=[r.run_id for r in ordered if r])
    for fact, row in zip(facts, ordered, strict=True):
        # Presentation too: what the speculation accepted at the column's leaderboard point.
        fact["speculation"] = speculation.get(row.run_id) if row else None
    significance = _compare_significance(ordered, basis, org)
    if request.GET.get("format") in {"csv", "json"}:
        table = _board_table([r for r in ordered if r])
        for entry, ratio in zip(table, ratios, strict=False):
            entry["throughput_ratio_vs_first"] = ratio
        cells = [c for c, r in zip(significance, ordered, strict=True) if r]
        for entry, cell in zip(table, cells, strict=True):
            # The ratio's interval (workers/significance.py): flat fields, for CSV too.
            throughput = cell.get("throughput") if cell else None
            entry["throughput_change_vs_first"] = throughput.change if throughput else None
            entry["throughput_change_low"] = throughput.low if throughput else None
            entry["throughput_change_high"] = throughput.high if throughput else None
            entry["throughput_verdict_vs_first"] = throughput.verdict if throughput else None
        if request.GET["format"] == "csv":
            return _csv("compare.csv", table)
        return _json_download("compare.json", table)
    points = selectors.chart_points(
        run_ids=board_page.run_ids, tier=tier, basis=basis, own=board.own_prices
    )
    context = {
        "significance": significance,
        "deployments": deployments,
        "columns": list(zip(deployments, ordered, ratios, cost_ratios, facts, strict=True)),
        "differences": diffs,
        "unfair": any(d.unfair for d in diffs),
        "accuracy_deltas": deltas,
        "scenario": scenario_list(org=org).filter(slug=scenario_slug).first(),
        # Only scenarios of runs the viewer may see: a private run's scenario name stays private.
        "scenarios": Scenario.objects.filter(
            runs__in=runs_visible(org=org).filter(deployment__in=deployments)
        ).distinct(),
        "tier": tier,
        "basis": basis,
        "own_prices": sheet.pairs(),
        "price_profile": sheet.profile,
        "slo_text": board_page.slo_text,
        "tiers": selectors.price_tiers(),
        "query": request.GET.urlencode(),
        "chart": charts.pareto_figure(
            points,
            x="interactivity",
            y="tput_per_gpu",
            optimal_only=False,
            title="Each deployment's load levels",
            basis=basis,
            series="deployment_id",
            names=picker["names"],
            lines=True,
        ),
        "embed_query": _without(request.GET, "format"),
        **picker,
    }
    if embed:
        return _embed(
            request,
            figure=context["chart"],
            caption=f"{context['scenario'].name if context['scenario'] else ''} · {tier}",
            source=f"/compare/?{request.GET.urlencode()}",
        )
    return render(request, "leaderboard/compare.html", context)


# What /compare/ states with an interval against the first column (workers/significance.py).
SIGNIFICANCE_METRICS = ("interactivity_p50", "ttft_p99_ms")


def _compare_significance(ordered: list, basis: str, org: Organization | None) -> list:
    """Per column, sentences on throughput and latency against the first column with a 95%
    interval ("within noise" when it holds 0); None for the first column and where request
    records are missing (the ratio then stands alone, and the page says why)."""
    first = ordered[0]
    if first is None:
        return [None] * len(ordered)
    metrics = [f"{basis}_tok_s_gpu", *SIGNIFICANCE_METRICS]
    rest = [row.run_id if row else None for row in ordered[1:]]
    found = run_significance.compare_runs(
        baseline_run=first.run_id, other_runs=rest, metrics=metrics, org=org
    )
    cells: list = [None]
    for row, diffs in zip(ordered[1:], found, strict=True):
        if row is None:
            cells.append(None)
        elif diffs is None:
            cells.append({"missing": True})
        else:
            cells.append(
                {
                    "sentences": [d.sentence("the first column", "This column") for d in diffs],
                    "verdict": diffs[0].verdict,
                    "throughput": diffs[0],
                    "runs": (diffs[0].runs_a, diffs[0].runs_b),
                }
            )
    return cells


def column_name(deployment) -> str:
    """A compare column's heading, and the name of its line on the chart."""
    facts = selectors.deployment_facts(deployment)
    return f"{facts['hardware']} {facts['engine']} {facts['quantization']} (#{deployment.pk})"


def _compare_picker(deployments: list, org: Organization | None) -> dict[str, Any]:
    """What /compare/ needs to add or remove a deployment on the page itself."""
    chosen = [d.pk for d in deployments]
    removal = {}
    for d in deployments:
        rest = QueryDict(mutable=True)
        rest.setlist("d", [str(i) for i in chosen if i != d.pk])
        removal[d.pk] = rest.urlencode()
    return {
        "chosen": chosen,
        "names": {d.pk: column_name(d) for d in deployments},
        "removal": removal,
        "choices": [c for c in selectors.deployment_choices(org=org) if c[0] not in chosen],
        "can_add": len(chosen) < 4,
    }


def _common_scenario(deployment_ids: list[int], org: Organization | None) -> str | None:
    counts = Counter(
        runs_visible(org=org)
        .filter(deployment_id__in=deployment_ids, scenario__isnull=False)
        .order_by()
        .values_list("scenario__slug", "deployment_id")
        .distinct()
    )
    per_scenario = Counter(slug for slug, _ in counts)
    return per_scenario.most_common(1)[0][0] if per_scenario else None


def _accuracy_deltas(deployments, org: Organization | None) -> list[fairness.AccuracyDelta]:
    """Each task both sides scored: paired through the one comparison /accuracy/compare/
    uses when both have per-item outcomes, else an unpaired interval (never across protocols)."""
    base = {a["task"]: a for a in selectors.accuracy_for(deployment=deployments[0], org=org)}
    deltas = []
    for other in deployments[1:]:
        for result in selectors.accuracy_for(deployment=other, org=org):
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
    org = viewer_org(request)
    context["published_runs"] = selectors.published_runs(model="GLM 5.2", org=org)
    context["measured_b200"] = selectors.measured_runs_count(model="GLM 5.2", sku="B200", org=org)
    context["evidence"] = _like_for_like_evidence(org)
    context["claim_query"] = urlencode(
        {"throughput_ratio": PUBLISHED_THROUGHPUT_RATIO, "claimed_cost_ratio": CLAIMED_COST_RATIO}
    )
    context["calculator_query"] = urlencode(
        {"model": "GLM 5.2", "input_tokens": 20000, "output_tokens": 1000, "cache_hit_rate": 0.6}
    )
    context["timeline_chart"] = charts.bar_figure(
        context["timeline_labels"],
        context["timeline_values"],
        title="GLM 5.2 on 8×MI355X: per-node tok/s as published",
        y_title="tok/s per node (kind unstated)",
    )
    # B200 projected, never measured: drawn dashed with its held-out error band.
    context["projection"] = projection_selectors.glm_story_context(context["final"])
    return render(request, "leaderboard/story.html", context)


def _like_for_like_evidence(org: Organization | None) -> list[dict[str, Any]]:
    """MI355X against B200 where the data has both on one model, precision and scenario:
    per precision, the fastest pair in the widest views, with what still differs."""
    found = []
    for model, scenario in selectors.widest_views(org=org)[:4]:
        pairs = selectors.like_for_like_pairs(
            org=org, model=model, scenario=scenario, skus=HEADLINE_SKUS
        )
        for pair in pairs:
            found.append(
                {
                    "model": model,
                    "scenario": scenario,
                    "pair": pair,
                    "ratio": pair.b.tput_per_gpu / pair.a.tput_per_gpu,
                    "cost_ratio": pair.a.usd_per_mtok / pair.b.usd_per_mtok
                    if pair.a.usd_per_mtok and pair.b.usd_per_mtok
                    else None,
                }
            )
    return found


def methodology(request: HttpRequest) -> HttpResponse:
    """docs/methodology.md, rendered: every number's heading on the pages links here."""
    response = render(request, "leaderboard/methodology.html", {"body": methodology_html()})
    return response


def _embed(request: HttpRequest, *, figure: dict, caption: str, source: str) -> HttpResponse:
    """A chart alone, for an <iframe> on another site: framing is allowed for this view."""
    title = (figure.get("layout", {}).get("title") or {}).get("text", "chart")
    response = render(
        request,
        "embed.html",
        {"figure": figure, "title": title, "caption": caption, "source": source},
    )
    response.xframe_options_exempt = True
    return response


# Embeds are meant to be framed by other sites: the site-wide CSP forbids framing.
EMBED_CSP = {**settings.SECURE_CSP, "frame-ancestors": ["*"]}


@csp_override(EMBED_CSP)
def embed_board(request: HttpRequest) -> HttpResponse:
    """/embed/board/?<leaderboard filters>&x=interactivity|e2el_s: one Pareto chart."""
    models = selectors.model_names()
    board = board_from_query(request.GET, models)
    page = selectors.leaderboard_rows(board=board)
    figures = _board_charts(board, page, request.GET)
    x = "pareto_latency" if request.GET.get("x") == "e2el_s" else "pareto_interactivity"
    source = f"/?{_without(request.GET, 'x')}"
    caption = f"{board.model or 'no model'} · {page.scenario.name if page.scenario else ''}"
    return _embed(request, figure=figures[x], caption=caption, source=source)


@csp_override(EMBED_CSP)
def embed_compare(request: HttpRequest) -> HttpResponse:
    """/embed/compare/?d=..&d=..: the compare page's chart, lines named like its columns."""
    return compare(request, embed=True)
