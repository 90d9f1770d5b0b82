"""The leaderboard itself: its query, its cached public page, its charts and downloads."""

import dataclasses
import json
from dataclasses import replace
from datetime import date
from typing import Any

from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from pydantic import ValidationError

from apps.accounts.models import Organization
from apps.accounts.scoping import current_org, viewer_org
from apps.catalog.selectors import scenario_list
from apps.costs.answer import Side
from apps.costs.answer_selectors import DEFAULT_QUESTION, DEFAULT_TIER, ask
from apps.costs.api.answer import AnswerQuery
from apps.costs.formulas import CostInputError
from apps.costs.prices import price_sheet
from apps.costs.reference import price_set
from apps.costs.slo_query import slo_controls
from apps.htmx import page_or_partial, wants_partial
from apps.leaderboard import charts, evidence_selectors, selectors
from apps.leaderboard.forms import (
    FACETS,
    FIELD_LABELS,
    SLO_FIELDS,
    BoardChoices,
    BoardQuery,
    slo_over_tier,
)
from apps.leaderboard.views.answer import answer_query
from apps.leaderboard.views.common import (
    BASES,
    board_table,
    csv_download,
    json_download,
    query_without,
)
from apps.projections import selectors as projection_selectors
from apps.runs.selectors import run_facets
from apps.runs.services import runs_version

PUBLIC_MAX_AGE = 60


def board_query(request: HttpRequest, org: Organization | None) -> BoardQuery:
    """The board's query, bound and validated once per request: the page cache's check and
    the page read the same form, and building it reads every deployment (the models, price
    tiers and facet values the viewer may name) and checks the scenario."""
    memo = request.__dict__.setdefault("_board_query", {})
    key = org.pk if org is not None else None
    if key not in memo:
        choices = BoardChoices(
            models=selectors.model_names(org=org),
            tiers=selectors.price_tiers(org=org),
            facets=run_facets(org=org),
        )
        memo[key] = BoardQuery(
            request.GET, choices=choices, scenarios=selectors.scenarios_with_runs(org=org)
        )
    return memo[key]


def board_from_query(query: BoardQuery, org: Organization | None = None) -> selectors.Board:
    """The board a query asks for, each bad value replaced by its default; a missing model or
    scenario is the widest view's."""
    models = query.choices.models
    model = query.value("model")
    scenario = query.value("scenario")
    if model is None or not scenario:
        # The widest view of the model asked for (or of any model): most accelerators.
        views = [v for v in selectors.widest_views(org=org) if model in (None, v[0])]
        if views:
            model = model or views[0][0]
            scenario = scenario or next((s for m, s in views if m == model), None)
    model = model or (models[0] if models else None)
    slo_tier, slo_bounds = slo_over_tier(query)
    if not scenario:
        candidates = selectors.scenarios_with_runs(org=org).filter(
            runs__deployment__model__name=model
        )
        first = candidates.order_by("-is_preset", "slug").first()
        scenario = first.slug if first else None
    return selectors.Board(
        model=model,
        scenario=scenario,
        tier=query.value("tier"),
        prices_as_of=query.value("prices_as_of"),
        accelerators=query.value("accelerator"),
        engines=query.value("engine"),
        quantizations=query.value("quantization"),
        servings=query.value("serving"),
        since=query.value("since"),
        until=query.value("until"),
        include_simulated=query.value("simulated"),
        origins=query.value("origin"),
        include_unchecked=query.value("unchecked"),
        official=query.value("official"),
        sort=query.value("sort"),
        page=query.value("page"),
        rule=query.value("rule"),
        days=query.value("days"),
        basis=query.value("basis"),
        slo_tier=slo_tier,
        slo_bounds=slo_bounds,
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
    without repeats), with values the page accepts (its form finds no problem) and ints and
    dates bounded, so `/?model=<random>` is rendered but stores nothing: the key count is
    bounded."""
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
    form = board_query(request, None)  # the page's own form: read once, for both
    if not form.is_valid():
        return False
    if any(form.cleaned_data[name] > CACHED_MAX_INT for name in ("page", "days")):
        return False
    dates = [form.cleaned_data[name] for name in ("since", "until")]
    return all(CACHED_SINCE <= day <= date.today() for day in dates if day is not None)


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
    board: selectors.Board,
    page: selectors.BoardPage,
    query: BoardQuery,
    org: Organization | None = None,
) -> dict[str, Any]:
    y, series = query.value("y"), query.value("series")
    optimal = not query.value("all")
    metric = charts.Y_AXES[y][0].split(" (")[0].format(basis=board.basis)
    points = selectors.chart_points(run_ids=page.run_ids, board=board, org=org)
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
    context: dict[str, Any], board: selectors.Board, page: selectors.BoardPage, query: BoardQuery
) -> None:
    """Opt-in (?projected=1): the projected curves of this view, dashed with their band on
    the interactivity chart. Never a row, so never ranked."""
    context["show_projected"] = query.value("projected")
    if not context["show_projected"]:
        return
    projection = projection_selectors.board_projection(model=board.model, scenario=page.scenario)
    if isinstance(projection, projection_selectors.NoProjection):
        context["no_projection"] = projection.reason
        return
    context["projection"] = projection
    if context["y"] != "tput_per_gpu":
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
    query = board_query(request, org)
    # Unknown or out-of-range values, each with its field and label: the page shows them and
    # uses the default, the CSV/JSON forms answer 400.
    problems = query.problems()
    if problems and query.value("format"):
        return _bad_query(problems)
    board = board_from_query(query, org)
    sheet = price_sheet(request)  # the one price reader (apps.costs.prices)
    board = replace(board, own_prices=sheet.pairs(), price_profile=sheet.profile)
    page = selectors.leaderboard_rows(board=board, org=org)
    if query.value("format") == "csv":
        return csv_download("leaderboard.csv", board_table(page.rows))
    if query.value("format") == "json":
        return json_download("leaderboard.json", board_table(page.rows))
    context = {
        "board": board,
        "page": page,
        "price_set": price_set(board.prices_as_of),
        "models": query.choices.models,
        "scenarios": selectors.scenarios_with_runs(org=org),
        "bases": BASES,
        "query": request.GET.urlencode(),
        "private_org": current_org(request),
        "showing_private": org is not None,
        "unsorted_query": query_without(request.GET, "sort", "page"),
        "facets": query.choices.facets,
        "problems": problems,
        "embed_query": query_without(request.GET, "page", "format"),
        "imported": selectors.imported_sources(run_ids=page.run_ids),
        "slo_form": slo_controls(request.GET, page.scenario),
        "swapped": wants_partial(request),
        **board_charts(board, page, query, org),
    }
    _add_projection(context, board, page, query)
    if query.value("unofficial"):
        context.update(_unofficial_overlay(board, context, org))
    if not wants_partial(request):
        context["headline"] = _headline(org, board, request)
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
    points = selectors.chart_points(run_ids=overlay.run_ids, board=board, org=org)
    for key, x in (("pareto_interactivity", "interactivity"), ("pareto_latency", "e2el_s")):
        charts.add_unofficial_overlay(context[key], points, x=x, y=context["y"], labels=names)
    return {"unofficial_rows": overlay.ranked}


HEADLINE_SKUS = ("MI355X", "B200")


def _headline(
    org: Organization | None, board: selectors.Board, request: HttpRequest
) -> dict[str, Any] | None:
    """The question the site was started for, answered where the data allows: the two
    accelerators side by side, like for like, in the board's own view when it has both, else
    the widest view that does; asked through the one answer at the board's SLO, in the
    default question's precision where both have a point there, else in the precision the
    like-for-like rows share (apps/leaderboard/evidence_selectors.py)."""
    views = selectors.widest_views(org=org)[:5]
    if board.model and board.scenario:
        views = [(board.model, board.scenario), *views]
    slo = {k: v for k, v in request.GET.items() if k in SLO_FIELDS and v}
    for model, scenario in dict.fromkeys(views):
        question = {"model": model, "scenario": scenario, **slo}
        if board.tier != DEFAULT_TIER:
            question["tier"] = board.tier
        asking = _headline_ask(question, board, org)
        if asking is None:
            continue
        if not (asking.answer.a.point and asking.answer.b.point):
            pairs = evidence_selectors.like_for_like_pairs(
                org=org, model=model, scenario=scenario, skus=HEADLINE_SKUS
            )
            if not pairs:
                continue
            question["precision"] = pairs[0].a.quantization
            asking = _headline_ask(question, board, org) or asking
        # The link and the two points it names are the one answer's (apps/costs/answer.py).
        found = scenario_list(org=org).filter(slug=scenario).first()
        return {
            "model": model,
            "scenario": scenario,
            "scenario_name": found.name if found else scenario,
            "precision": asking.asked.facts.precision,
            "basis": asking.asked.basis.value,
            "answer_query": answer_query(question),
            "slo": asking.answer.slo_described,
            "answer": asking.answer,
            "sides": (asking.answer.a, asking.answer.b),
            "lead": _lead(asking.answer.a, asking.answer.b),
        }
    return None


def _lead(a: Side, b: Side) -> dict[str, Any] | None:
    """The answer in one sentence's terms: which side serves more tokens per GPU, by how much,
    and which is cheaper per token (None when neither side has a point at the SLO)."""
    if not (a.point and b.point and a.tok_s_per_gpu and b.tok_s_per_gpu):
        return None
    a_tok, b_tok = a.tok_s_per_gpu, b.tok_s_per_gpu
    leader, other = (a, b) if a_tok >= b_tok else (b, a)
    cheaper = None
    if leader.usd_per_mtok and other.usd_per_mtok:
        cheaper = leader if leader.usd_per_mtok <= other.usd_per_mtok else other
    return {
        "leader": leader,
        "other": other,
        "ratio": max(a_tok, b_tok) / min(a_tok, b_tok),
        "cheaper": cheaper,
        "leader_is_cheaper": cheaper is leader,
    }


def _headline_ask(question: dict[str, str], board: selectors.Board, org: Organization | None):
    """The headline's question asked (its two points only: no swing, no interval), or None
    when it cannot be asked here (no visible run of the scenario)."""
    try:
        asked = AnswerQuery.model_validate({**DEFAULT_QUESTION, **question}).asked(
            dict(board.own_prices)
        )
        return ask(asked, org=org, with_swing=False, with_uncertainty=False)
    except (CostInputError, ValidationError):
        return None
