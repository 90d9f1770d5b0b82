"""Pure functions building Plotly figure dicts; the templates only serialise them."""

from collections import defaultdict
from typing import Any

Figure = dict[str, Any]

LAYOUT = {
    "margin": {"l": 60, "r": 20, "t": 40, "b": 50},
    "hovermode": "closest",
    "legend": {"orientation": "h", "y": -0.2},
    "paper_bgcolor": "#ffffff",
    "plot_bgcolor": "#ffffff",
    "font": {"family": "system-ui, sans-serif", "size": 12},
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


def pareto_figure(
    points: list[dict[str, Any]],
    *,
    x: str,
    y: str,
    optimal_only: bool,
    title: str,
    basis: str = "output",
) -> Figure:
    x_title, x_higher = X_AXES[x]
    y_title, y_higher = Y_AXES[y]
    y_title = y_title.format(basis=basis)
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for point in points:
        groups[point["group"]].append(point)
    traces = []
    for group, members in sorted(groups.items()):
        shown = (
            pareto_optimal(members, x, y, x_higher, y_higher)
            if optimal_only
            else sorted(
                (p for p in members if p.get(x) is not None and p.get(y) is not None),
                key=lambda p: p[x],
            )
        )
        if not shown:
            continue
        traces.append(
            {
                "type": "scatter",
                "mode": "lines+markers" if optimal_only else "markers",
                "name": group,
                "x": [p[x] for p in shown],
                "y": [p[y] for p in shown],
                "text": [p["config"] for p in shown],
                "customdata": [f"/runs/{p['run_id']}/" for p in shown],
                "hovertemplate": (
                    "%{text}<br>x=%{x:.3g}<br>y=%{y:.4g}<extra>%{fullData.name}</extra>"
                ),
            }
        )
    return {
        "data": traces,
        "layout": {
            **LAYOUT,
            "title": {"text": title},
            "xaxis": {"title": {"text": x_title}},
            "yaxis": {"title": {"text": y_title}, "rangemode": "tozero"},
        },
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
                "line": {"shape": "linear"},
            }
        )
    return {
        "data": traces,
        "layout": {
            **LAYOUT,
            "title": {"text": title},
            "xaxis": {"title": {"text": x_title}},
            "yaxis": {"title": {"text": "fraction of requests"}, "range": [0, 1.02]},
        },
    }


def history_figure(history: list[dict[str, Any]], *, title: str) -> Figure:
    """Best throughput per GPU per run over time; regressions as red markers."""
    xs = [h["when"] for h in history]
    regressions = [h for h in history if h["regression"]]
    return {
        "data": [
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": "best tok/s/GPU",
                "x": xs,
                "y": [h["tput_per_gpu"] for h in history],
                "text": [h["engine_version"] for h in history],
                "customdata": [f"/runs/{h['run_id']}/" for h in history],
                "hovertemplate": "%{x}<br>%{y:.4g} tok/s/GPU<br>engine %{text}<extra></extra>",
            },
            {
                "type": "scatter",
                "mode": "markers",
                "name": "regression",
                "x": [h["when"] for h in regressions],
                "y": [h["tput_per_gpu"] for h in regressions],
                "marker": {"color": "#dc2626", "size": 12, "symbol": "x"},
                "customdata": [f"/runs/{h['run_id']}/" for h in regressions],
            },
        ],
        "layout": {
            **LAYOUT,
            "title": {"text": title},
            "yaxis": {"title": {"text": "tok/s per GPU"}, "rangemode": "tozero"},
        },
    }


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
            }
        ],
        "layout": {
            **LAYOUT,
            "title": {"text": title},
            "yaxis": {"title": {"text": y_title}, "rangemode": "tozero"},
        },
    }
