"""The leaderboard itself: its query, its cached public page, its charts and downloads."""

import dataclasses
import json
from dataclasses import dataclass, replace
from datetime import date
from typing import Any

from django.core.cache import cache
from django.http import HttpRequest, HttpResponse, QueryDict

from apps.accounts.models import Organization
from apps.accounts.scoping import current_org, viewer_org
from apps.costs.formulas import TokenKind
from apps.costs.prices import price_sheet
from apps.htmx import page_or_partial, wants_partial
from apps.leaderboard import charts, evidence_selectors, selectors
from apps.leaderboard.templatetags.frame import label
from apps.leaderboard.views.common import (
    BASES,
    board_table,
    csv_download,
    json_download,
    query_int,
    query_tier,
    query_without,
)
from apps.projections import selectors as projection_selectors
from apps.runs.models import Run
from apps.runs.selectors import run_facets
from apps.runs.services import runs_version

PUBLIC_MAX_AGE = 60


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


@dataclass(frozen=True)
class BoardChoices:
    """What a board query may name for one viewer: the models, price tiers and facet values
    of the runs they may see."""

    models: list[str]
    tiers: list[str]
    facets: dict[str, list[str]]


def board_choices(request: HttpRequest, org: Organization | None) -> BoardChoices:
    """Read once per request: the page cache's check and the page itself both need them, and
    each read walks every deployment."""
    memo = request.__dict__.setdefault("_board_choices", {})
    key = org.pk if org is not None else None
    if key not in memo:
        memo[key] = BoardChoices(
            models=selectors.model_names(org=org),
            tiers=selectors.price_tiers(),
            facets=run_facets(org=org),
        )
    return memo[key]


def query_problems(
    query: QueryDict, *, choices: BoardChoices, org: Organization | None
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

    one_of("model", choices.models)
    one_of("tier", choices.tiers)
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
    for field in FACETS:
        unknown = [v for v in query.getlist(field) if v and v not in choices.facets[field]]
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
        tier=query_tier(query.get("tier")),
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
        page=query_int(query.get("page"), 1),
        rule=query.get("rule") if query.get("rule") in selectors.RUN_RULES else "latest",
        days=max(1, query_int(query.get("days"), selectors.DEFAULT_BEST_DAYS)),
        basis=query.get("basis") if query.get("basis") in BASES else TokenKind.OUTPUT.value,
    )


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


def _cacheable(request: HttpRequest) -> bool:
    """Only URLs the page can tell apart get a cache key: known parameters, each once (facets
    without repeats), with values the page accepts (query_problems finds none, ints and dates
    bounded), so `/?model=<random>` is rendered but stores nothing: the key count is bounded."""
    query = request.GET
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
    return not query_problems(query, choices=board_choices(request, None), org=None)


def _cached(request: HttpRequest, build) -> HttpResponse:
    """Public pages are cached per URL until the next run lands (the version changes).
    Public pages carry nothing of the visitor's (no CSRF token: static/js/csrf.js reads the
    cookie). Pages for signed-in people are never cached: they carry the person's menu and
    may show their organization's private runs."""
    if request.user.is_authenticated:
        return build()  # apps.http_cache marks it private, no-store
    if not _cacheable(request):
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


def board_charts(
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
        **{
            f"pareto_{x}": charts.pareto_figure(
                points,
                x=axis,
                y=y,
                optimal_only=optimal,
                title=f"{metric} vs {x}",
                basis=board.basis,
                series=series,
            )
            for x, axis in (("interactivity", "interactivity"), ("latency", "e2el_s"))
        },
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
    choices = board_choices(request, org)
    models = choices.models
    problems = query_problems(request.GET, choices=choices, org=org)
    if problems and request.GET.get("format") in {"csv", "json"}:
        return _bad_query(problems)
    board = board_from_query(request.GET, models, org)
    sheet = price_sheet(request)  # the one price reader (apps.costs.prices)
    board = replace(board, own_prices=sheet.pairs(), price_profile=sheet.profile)
    page = selectors.leaderboard_rows(board=board, org=org)
    if request.GET.get("format") == "csv":
        return csv_download("leaderboard.csv", board_table(page.rows))
    if request.GET.get("format") == "json":
        return json_download("leaderboard.json", board_table(page.rows))
    context = {
        "board": board,
        "page": page,
        "models": models,
        "scenarios": selectors.scenarios_with_runs(org=org),
        "bases": BASES,
        "query": request.GET.urlencode(),
        "private_org": current_org(request),
        "showing_private": org is not None,
        "unsorted_query": query_without(request.GET, "sort", "page"),
        "facets": choices.facets,
        "problems": problems,
        "embed_query": query_without(request.GET, "page", "format"),
        "imported": selectors.imported_sources(run_ids=page.run_ids),
        **board_charts(board, page, request.GET),
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
        pairs = evidence_selectors.like_for_like_pairs(
            org=org, model=model, scenario=scenario, skus=HEADLINE_SKUS
        )
        if pairs:
            return {"pair": pairs[0], "model": model, "scenario": scenario}
    return None
