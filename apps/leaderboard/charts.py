"""Pure functions building Plotly figure dicts; the templates only serialise them.

Every figure may carry two keys Plotly ignores: "empty" (why nothing is drawn, shown in words
instead of an empty axis) and the traces themselves feed the data table under each chart
(figure_table), so every chart has a text alternative.
"""

from collections import defaultdict
from datetime import datetime, timedelta
from typing import Any

from apps.charts import LAYOUT, Figure, chart_figure, empty_figure, scatter, series_style

# The dimensions a reader can split the Pareto series by (query value -> label); "group" is
# accelerator × precision, the historical default.
SERIES = {
    "group": "accelerator × precision",
    "engine": "engine",
    "accelerator": "accelerator",
    "precision": "precision",
    "parallelism": "parallelism",
}


# Titles name the token basis ({basis}: output, input or total).
Y_AXES = {
    "tput_per_gpu": ("Throughput per GPU ({basis} tok/s)", True),
    "usd_per_mtok": ("$ per million {basis} tokens", False),
    "tok_per_mw": ("{basis} tokens/s per MW (all-in power)", True),
}
X_AXES = {
    "interactivity": ("Interactivity (tok/s/user, p50)", True),
    "e2el_s": ("End-to-end latency p50 (s)", False),
}


def pareto_optimal(
    points: list[dict[str, Any]], x: str, y: str, x_higher: bool, y_higher: bool
) -> list[dict[str, Any]]:
    """Points no other point beats on both axes, sorted along x (one sweep, O(n log n))."""
    sx, sy = (1 if x_higher else -1), (1 if y_higher else -1)
    usable = [p for p in points if p.get(x) is not None and p.get(y) is not None]
    # Best x first (ties: best y first); a point is on the front when its y beats every
    # point seen before it, i.e. every point with a better or equal x.
    usable.sort(key=lambda p: (-sx * p[x], -sy * p[y]))
    front, best_y = [], None
    for p in usable:
        if best_y is None or sy * p[y] > best_y:
            front.append(p)
            best_y = sy * p[y]
    return sorted(front, key=lambda p: p[x])


def _accelerator_series(groups: dict[str, list[dict[str, Any]]], series: str) -> dict[str, str]:
    """Series name -> the accelerator whose colour it wears: each series of one accelerator,
    when the series split by accelerator (accelerator, accelerator × precision) or no two
    series share one. Else none: the series keep colours of their own names."""
    one: dict[str, Any] = {}
    for name, points in groups.items():
        found = {p.get("accelerator") for p in points}
        if len(found) != 1 or None in found:
            return {}
        one[name] = found.pop()
    split_by_it = series in {"group", "accelerator"}
    return one if split_by_it or len(set(one.values())) == len(one) else {}


def _shown(
    members: list[dict[str, Any]],
    x: str,
    y: str,
    x_higher: bool,
    y_higher: bool,
    *,
    optimal_only: bool,
) -> list[dict[str, Any]]:
    """A series' points on its line: its front, or every point with both figures, by x."""
    if optimal_only:
        return pareto_optimal(members, x, y, x_higher, y_higher)
    return sorted(
        (p for p in members if p.get(x) is not None and p.get(y) is not None), key=lambda p: p[x]
    )


def _series_trace(
    group: str, shown: list[dict[str, Any]], *, x: str, y: str, x_title: str, y_title: str
) -> dict[str, Any]:
    return {
        "type": "scatter",
        "mode": "markers",
        "name": group,
        "x": [p[x] for p in shown],
        "y": [p[y] for p in shown],
        "text": [p["config"] for p in shown],
        "customdata": [f"/runs/{p['run_id']}/" for p in shown],
        # Hover names both metrics with their units, not x= and y=.
        "hovertemplate": (
            f"%{{text}}<br>{x_title}: %{{x:.3g}}<br>{y_title}: %{{y:.4g}}"
            "<extra>%{fullData.name}</extra>"
        ),
    }


def pareto_figure(
    points: list[dict[str, Any]],
    *,
    x: str,
    y: str,
    optimal_only: bool,
    title: str,
    basis: str = "output",
    series: str = "group",
    names: dict[Any, str] | None = None,
    lines: bool | None = None,
) -> Figure:
    """One trace per value of `series` (a key of each point: group, engine, accelerator,
    precision, parallelism, deployment_id). `names` renames series values (the compare page
    names each line like its table column); `lines` joins all points, not only the front."""
    x_title, x_higher = X_AXES[x]
    y_title, y_higher = Y_AXES[y]
    y_title = y_title.format(basis=basis)
    names = names or {}
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    # A point the tables refuse (client-bound, prompts off their length: its "invalid"
    # reason) is never on a front or a series' line: drawn apart, hollow, with its reason.
    invalid = [p for p in points if p.get("invalid")]
    for point in points:
        if point.get("invalid"):
            continue
        key = point.get(series, point.get("group"))
        groups[names.get(key, str(key))].append(point)
    by_accelerator = _accelerator_series(groups, series)
    traces = []
    for group, members in sorted(groups.items()):
        shown = _shown(members, x, y, x_higher, y_higher, optimal_only=optimal_only)
        if not shown:
            continue
        joined = optimal_only if lines is None else lines
        trace = _series_trace(group, shown, x=x, y=y, x_title=x_title, y_title=y_title)
        trace["mode"] = "lines+markers" if joined else "markers"
        # A series of one accelerator wears its colour (apps.charts), when the series are
        # accelerators (or tell them apart): not when they are engines on one accelerator,
        # which would then share one colour.
        traces.append({**trace, **series_style(group, accelerator=by_accelerator.get(group))})
    hollow = sorted(
        (p for p in invalid if p.get(x) is not None and p.get(y) is not None), key=lambda p: p[x]
    )
    if traces and hollow:
        traces.append(_invalid_trace(hollow, x=x, y=y, x_title=x_title, y_title=y_title))
    if not traces:
        return empty_figure(title, _nothing_to_draw(points, y=y, x_title=x_title, y_title=y_title))
    return chart_figure(traces, title=title, x_title=x_title, y_title=y_title)


def _nothing_to_draw(points: list[dict[str, Any]], *, y: str, x_title: str, y_title: str) -> str:
    """Why a Pareto chart has no trace, in words."""
    if not points:
        return "Nothing to draw: no deployment in this view has a load level to plot."
    measured = [p for p in points if p.get(y) is not None]
    return (
        f"Nothing to draw: no run here reports {x_title.split(' (')[0].lower()} beside "
        f"{y_title.split(' (')[0].lower()}"
        + (
            " (imported summaries often carry throughput without per-user rates)."
            if measured
            else "."
        )
    )


def _invalid_trace(
    shown: list[dict[str, Any]], *, x: str, y: str, x_title: str, y_title: str
) -> dict[str, Any]:
    """The points the tables refuse, hollow, each with its reason: never a front."""
    return {
        "type": "scatter",
        "mode": "markers",
        "name": "not valid (never ranked)",
        "x": [p[x] for p in shown],
        "y": [p[y] for p in shown],
        "text": [f"{p['config']} · not valid: {p['invalid']}" for p in shown],
        "customdata": [f"/runs/{p['run_id']}/" for p in shown],
        "hovertemplate": (
            f"%{{text}}<br>{x_title}: %{{x:.3g}}<br>{y_title}: %{{y:.4g}}<extra>not valid</extra>"
        ),
        "marker": {"symbol": "circle-open", "size": 9, "color": "#6b7280", "line": {"width": 1.5}},
    }


def cdf_figure(series: dict[str, list[float]], *, title: str, x_title: str) -> Figure:
    traces = []
    for name, values in series.items():
        ordered = sorted(values)
        n = len(ordered)
        if not n:
            continue
        # The inverse of linear-interpolation percentiles (numpy's default, as stored): the
        # i-th smallest of n values is the 100·i/(n-1)-th percentile, joined by straight
        # lines, so reading p99 off this curve gives the p99 the tables show.
        traces.append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": name,
                "x": ordered,
                "y": [i / (n - 1) for i in range(n)] if n > 1 else [1.0],
                "line": {"shape": "linear", **series_style(name)["line"]},
                "hovertemplate": (
                    f"{name}: %{{x:.4g}} {x_title}<br>fraction of requests at or below: "
                    "%{y:.1%}<extra></extra>"
                ),
            }
        )
    if not traces:
        return empty_figure(
            title,
            "No per-request records were stored for this run, so there is no distribution to "
            "draw: the percentiles in the table are as the benchmark reported them.",
        )
    return {
        "data": traces,
        "layout": {
            **LAYOUT,
            "title": {"text": title},
            # Log x: TTFT (hundreds of ms) and E2EL (seconds) share the axis, and on a linear
            # one the TTFT curves lie squashed against the y axis.
            "xaxis": {
                "title": {"text": x_title},
                "type": "log" if all(min(t["x"]) > 0 for t in traces) else "linear",
            },
            "yaxis": {"title": {"text": "fraction of requests"}, "range": [0, 1.02]},
        },
    }


def date_axis(history: list[dict[str, Any]]) -> dict[str, Any]:
    """Day ticks, over at least a week: runs measured seconds apart otherwise zoom the axis
    in to ticks like 13:49:46.5595, which say nothing about a deployment's history."""
    whens = sorted(datetime.fromisoformat(h["when"]) for h in history if h.get("when"))
    axis: dict[str, Any] = {"tickformat": "%Y-%m-%d", "hoverformat": "%Y-%m-%d %H:%M"}
    if whens and whens[-1] - whens[0] < timedelta(days=7):
        middle = whens[0] + (whens[-1] - whens[0]) / 2
        axis["range"] = [
            (middle - timedelta(days=3.5)).isoformat(),
            (middle + timedelta(days=3.5)).isoformat(),
        ]
    return axis


def history_figure(history: list[dict[str, Any]], *, title: str) -> Figure:
    """Each run's leaderboard point over time, one line per scenario (scenarios are not
    comparable with each other), dates on x; regressions as red crosses."""
    y_title = "output tok/s per GPU at the SLO"
    by_scenario: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for h in history:
        if h["tput_per_gpu"] is not None:
            by_scenario[h["scenario"]].append(h)
    traces: list[dict[str, Any]] = [
        {
            "type": "scatter",
            "mode": "lines+markers",
            "name": scenario,
            "x": [h["when"] for h in runs],
            "y": [h["tput_per_gpu"] for h in runs],
            "text": [f"run {h['run_id']}, engine {h['engine_version']}" for h in runs],
            "customdata": [f"/runs/{h['run_id']}/" for h in runs],
            "hovertemplate": (
                f"%{{x|%Y-%m-%d %H:%M}}<br>{y_title}: %{{y:.4g}}<br>%{{text}}"
                "<extra>%{fullData.name}</extra>"
            ),
            **series_style(scenario),
        }
        for scenario, runs in sorted(by_scenario.items())
    ]
    regressions = [h for h in history if h["regression"]]
    if regressions:
        traces.append(
            scatter(
                "regression (a change point begins)",
                regressions,
                "when",
                "tput_per_gpu",
                marker={"color": "#dc2626", "size": 12, "symbol": "x"},
                customdata=[f"/runs/{h['run_id']}/" for h in regressions],
                hovertemplate=f"%{{x|%Y-%m-%d}}<br>{y_title}: %{{y:.4g}}<extra>regression</extra>",
            )
        )
    if not traces:
        return empty_figure(
            title, "No run of this deployment has a load level that meets its scenario's SLO."
        )
    return chart_figure(
        traces,
        title=title,
        x_title="run date",
        y_title=y_title,
        xaxis={"title": {"text": "run date"}, "type": "date", **date_axis(history)},
    )


def bar_figure(labels: list[str], values: list[float], *, title: str, y_title: str) -> Figure:
    return {
        "data": [
            {
                "type": "bar",
                "x": labels,
                "y": values,
                "text": [f"{v:,.0f}" for v in values],
                "textposition": "outside",
                "marker": {"color": "#3451b2"},
                "hovertemplate": f"%{{x}}<br>{y_title}: %{{y:,.0f}}<extra></extra>",
            }
        ],
        "layout": {
            **LAYOUT,
            "showlegend": False,  # one unnamed series: its bars are labelled on the axis
            "title": {"text": title},
            "yaxis": {"title": {"text": y_title}, "rangemode": "tozero"},
        },
    }


# Server gauges that are fractions (0..1) go on a right-hand axis: on the requests axis they
# would lie flat on zero.
FRACTION_SERIES = {"kv_cache_usage", "prefix_cache_hit_rate"}
# Counters drawn as their rise since the level's start; the other counters (token totals,
# speculative counts) are in the table beside the chart, on scales no request count shares.
COUNTED_SERIES = {"preemptions"}


def server_timeline_figure(
    series: list[dict[str, Any]], client: dict[str, list[float]] | None, *, title: str
) -> Figure:
    """One level over time, seconds from its start on x: the client's requests in flight
    beside the server's running and queued requests (and KV-cache usage on a right-hand
    axis), so a queue that built while the client held its load steady shows as such."""
    traces: list[dict[str, Any]] = []
    if client and client.get("t_s"):
        name = "client: requests in flight"
        traces.append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": name,
                "x": client["t_s"],
                "y": client["in_flight"],
                "line": {"shape": "hv", "dash": "dot", **series_style(name)["line"]},
                "hovertemplate": "%{x:.2f} s: %{y} in flight<extra>client</extra>",
            }
        )
    for s in series:
        fraction = s["name"] in FRACTION_SERIES
        if not (s.get("kind") == "gauge" or s["name"] in COUNTED_SERIES) or not s["values"]:
            continue
        values = s["values"]
        if s.get("kind") == "counter":
            values = [v - values[0] for v in values]
        name = f"server: {s['name']}" + (" (fraction, right axis)" if fraction else "")
        traces.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": name,
                "x": [t / 1000 for t in s["t_ms"]],
                "y": values,
                "yaxis": "y2" if fraction else "y",
                **series_style(s["name"]),
                "hovertemplate": (
                    f"%{{x:.2f}} s: %{{y:.4g}}<extra>{s['name']} ({s['source']})</extra>"
                ),
            }
        )
    if not traces:
        return empty_figure(
            title, "Neither the server's series nor per-request records were stored."
        )
    return {"data": traces, "layout": _timeline_layout(title)}


def _timeline_layout(title: str) -> dict[str, Any]:
    """Requests on the left axis, fractions (KV-cache usage) on the right."""
    return {
        **LAYOUT,
        "title": {"text": title},
        # Room for the right-hand axis's title.
        "margin": {**LAYOUT["margin"], "r": 60},
        "xaxis": {"title": {"text": "seconds from the level's start"}, "rangemode": "tozero"},
        "yaxis": {"title": {"text": "requests"}, "rangemode": "tozero"},
        "yaxis2": {
            "title": {"text": "fraction"},
            "overlaying": "y",
            "side": "right",
            "range": [0, 1.02],
            # Its own ticks, as percentages; the grid is the requests axis's.
            "tickmode": "linear",
            "tick0": 0,
            "dtick": 0.25,
            "tickformat": ".0%",
            "showgrid": False,
        },
    }


def add_unofficial_overlay(
    figure: Figure, points: list[dict[str, Any]], *, x: str, y: str, labels: dict[int, str]
) -> Figure:
    """Labelled unofficial runs (a branch's or pull request's trial) drawn over the board's
    chart as hollow markers with a dashed line, so they read as beside the ranking, not in
    it. `labels` names each run by its labels (branch=..., pr=...)."""
    shown = sorted(
        (p for p in points if p.get(x) is not None and p.get(y) is not None), key=lambda p: p[x]
    )
    if not shown or "data" not in figure:
        return figure
    x_title, y_title = X_AXES[x][0], figure["layout"]["yaxis"]["title"]["text"]
    figure["data"].append(
        {
            "type": "scatter",
            "mode": "markers",
            "name": "unofficial (labelled, not ranked)",
            "x": [p[x] for p in shown],
            "y": [p[y] for p in shown],
            "text": [f"{p['config']} · {labels.get(p['run_id'], 'unofficial')}" for p in shown],
            "customdata": [f"/runs/{p['run_id']}/" for p in shown],
            "hovertemplate": (
                f"%{{text}}<br>{x_title}: %{{x:.3g}}<br>{y_title}: %{{y:.4g}}"
                "<extra>unofficial</extra>"
            ),
            "marker": {
                "symbol": "diamond-open",
                "size": 11,
                "color": "#9a3412",
                "line": {"width": 2},
            },
        }
    )
    return figure


def swing_figure(
    floors: list[float],
    tok_ratios: list[float | None],
    usd_ratios: list[float | None],
    *,
    a: str,
    b: str,
) -> Figure:
    """The answer's ratios (A over B) against the interactivity floor, one marker per floor
    where the measured answer can change, with parity drawn at 1: where the $/Mtok line
    crosses 1 the cheaper side changes (the crossover, which the page says in words)."""
    traces = [
        {
            "type": "scatter",
            "mode": "lines+markers",
            "line": {"shape": "hv"},  # the answer holds until the next measured floor
            "name": name,
            "x": floors,
            "y": values,
            "hovertemplate": f"floor %{{x}} tok/s/user<br>{name}: %{{y:.2f}}<extra></extra>",
        }
        for name, values in (
            (f"{a} ÷ {b} tok/s/GPU", tok_ratios),
            (f"{a} ÷ {b} $/Mtok", usd_ratios),
        )
    ]
    return {
        "data": traces,
        "layout": {
            **LAYOUT,
            # The page states the crossover in a sentence above the chart: said once.
            "title": {"text": f"{a} ÷ {b} by interactivity floor (1 = parity)"},
            "xaxis": {"title": {"text": "interactivity floor, tok/s/user (p50)"}},
            "yaxis": {"title": {"text": f"ratio, {a} over {b}"}, "type": "log"},
            "shapes": [
                {
                    "type": "line",
                    "xref": "paper",
                    "x0": 0,
                    "x1": 1,
                    "y0": 1,
                    "y1": 1,
                    "line": {"dash": "dot", "color": "#888"},
                }
            ],
        },
    }
