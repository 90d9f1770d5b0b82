"""Plotly figure dicts for the cost pages, built by pure functions (no I/O, no Plotly import).

The page hands the dict to Plotly.js as JSON; tests read it as data.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from apps.charts import LAYOUT, chart_figure, empty_figure, series_style
from apps.costs.formulas import CostInputError, usd_per_mtok
from apps.costs.procurement import Row
from apps.costs.slo import Slo

INTERACTIVITY_KEY = "interactivity.p50"


def _bound_lines(slo: Slo, drawn: Callable[[str], bool]) -> list[dict]:
    """A dashed vertical line at each SLO bound whose metric key is `drawn` on the x axis."""
    return [
        {
            "type": "line",
            "xref": "x",
            "yref": "paper",
            "x0": bound.limit,
            "x1": bound.limit,
            "y0": 0,
            "y1": 1,
            "line": {"dash": "dash", "width": 1},
        }
        for bound in slo.bounds
        if drawn(bound.key)
    ]


def cost_vs_interactivity(rows: Sequence[Row], slo: Slo) -> dict:
    """$/Mtok against interactivity (tok/s/user, p50), one line per priced deployment.

    Each point is a measured load level priced at the row's $/GPU-hr; the SLO's
    interactivity floor, when set, is drawn as a dashed vertical line.
    """
    traces = []
    for row in rows:
        if row.price is None:
            continue
        measured = sorted(
            (p for p in row.curve.points if INTERACTIVITY_KEY in p.metrics),
            key=lambda p: p.metrics[INTERACTIVITY_KEY],
        )
        if not measured:
            continue
        price = row.price.usd_per_gpu_hour
        try:
            costs = [round(usd_per_mtok(price, p.tok_per_s_per_gpu), 6) for p in measured]
        except CostInputError:
            continue  # a price at the edge of float range: the table row says why
        name = f"{row.curve.label} (run {row.curve.run_id})"
        traces.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": name,
                **series_style(row.curve.label, accelerator=row.curve.accelerator),
                "x": [p.metrics[INTERACTIVITY_KEY] for p in measured],
                "y": costs,
                "text": [p.label for p in measured],
                "hovertemplate": (
                    "%{text}<br>interactivity p50: %{x:.1f} tok/s/user<br>$%{y:.4f} per million"
                    " tokens"
                    f" at ${price:g}/GPU-hr<extra></extra>"
                ),
            }
        )
    shapes = _bound_lines(slo, lambda key: key == INTERACTIVITY_KEY)
    if not traces:
        empty = empty_figure(
            "$/Mtok vs interactivity",
            "Nothing to draw: no priced deployment here reports interactivity per load level.",
        )
        empty["layout"]["shapes"] = shapes
        return empty
    return chart_figure(
        traces,
        title="$/Mtok vs interactivity",
        x_title="interactivity p50 (tok/s/user)",
        y_title="$ per million tokens",
        shapes=shapes,
    )


def cost_of_latency_figure(
    series: dict[str, list[tuple[float, float]]], slo: Slo, percentile: str
) -> dict:
    """$/month against the TTFT bound, one line per accelerator (its cheapest deployment at
    each bound); the SLO's own TTFT bound, when set, dashed."""
    title = f"Cost of latency: $/month against the TTFT {percentile} bound"
    if not series:
        return empty_figure(title, "Nothing to draw: no priced point reports this TTFT.")
    traces = [
        {
            "type": "scatter",
            "mode": "lines+markers",
            "name": sku,
            **series_style(sku, accelerator=sku),
            "line": {**series_style(sku, accelerator=sku)["line"], "shape": "hv"},
            "x": [round(limit, 6) for limit, _ in points],
            "y": [round(usd, 2) for _, usd in points],
            "hovertemplate": (
                f"{sku}<br>TTFT {percentile} ≤ %{{x:.3g}} s<br>$%{{y:,.0f}}/month<extra></extra>"
            ),
        }
        for sku, points in series.items()
    ]
    shapes = _bound_lines(slo, lambda key: key.startswith("ttft_s."))
    return {
        "data": traces,
        "layout": {
            **LAYOUT,
            "title": {"text": title},
            "xaxis": {"title": {"text": f"TTFT {percentile} bound (s)"}, "type": "log"},
            "yaxis": {"title": {"text": "$ per month"}, "rangemode": "tozero"},
            "shapes": shapes,
        },
    }
