"""Plotly figure dicts for the economics pages, built by pure functions (no I/O, no Plotly
import); the page hands each to Plotly.js as JSON and lists its points in a data table."""

from __future__ import annotations

from collections.abc import Sequence

from apps.charts import Figure, accelerator_colour, chart_figure, empty_figure
from apps.economics.selectors import CapRow, Priced


def _bar(name: str, rows: Sequence[Priced], values: list[float], colour: str = "") -> dict:
    return {
        "type": "bar",
        "name": name,
        "x": [p.row.sku for p in rows],
        "y": values,
        "text": [f"run {p.row.point.run_id}" if p.row.point else "" for p in rows],
        "textposition": "none",
        "marker": {"color": colour or [accelerator_colour(p.row.sku) for p in rows]},
    }


def margin_figure(rows: Sequence[Priced], *, tier: str) -> Figure:
    """Revenue, cost and margin per GPU-hour of each accelerator's answer-rule point."""
    priced = [p for p in rows if p.margin is not None]
    title = f"Revenue, cost and margin per GPU-hour ({tier})"
    if not priced:
        return empty_figure(title, "No accelerator has a priced point meeting the SLO.")
    margins = [p.margin for p in priced if p.margin is not None]
    traces = [
        _bar("revenue $/GPU-hr", priced, [m.revenue_per_gpu_hour for m in margins], "#0072B2"),
        _bar("cost $/GPU-hr", priced, [m.cost_per_gpu_hour for m in margins], "#999999"),
        _bar("margin $/GPU-hr", priced, [m.margin_per_gpu_hour for m in margins], "#009E73"),
    ]
    figure = chart_figure(traces, title=title, x_title="accelerator", y_title="$ per GPU-hour")
    figure["layout"]["barmode"] = "group"
    figure["layout"]["yaxis"].pop("rangemode", None)  # a margin may be negative
    return figure


def fleet_figure(rows: Sequence[Priced], *, megawatts: float) -> Figure:
    """Concurrent users a power budget serves at each accelerator's point."""
    planned = [p for p in rows if p.fleet is not None]
    title = f"Concurrent users at the SLO from {megawatts:g} MW"
    if not planned:
        return empty_figure(title, "No accelerator has a point meeting the SLO with power known.")
    users = [p.fleet.concurrent_users for p in planned if p.fleet is not None]
    return chart_figure(
        [_bar("concurrent users", planned, users)],
        title=title,
        x_title="accelerator",
        y_title="concurrent users",
    )


def first_token_figure(caps: Sequence[CapRow]) -> Figure:
    """The cheapest measured $/Mtok (output) per vendor under each TTFT p99 cap."""
    title = "Cheapest measured $/Mtok (output) per vendor under a TTFT p99 cap"
    vendors = sorted({vendor for cap in caps for vendor, _ in cap.by_vendor})
    traces = []
    for vendor in vendors:
        xs, ys, texts = [], [], []
        for cap in caps:
            side = dict(cap.by_vendor).get(vendor)
            if side is None or side.point is None or side.usd_per_mtok is None:
                continue
            xs.append(cap.cap_s)
            ys.append(round(side.usd_per_mtok, 6))
            texts.append(f"{side.sku} run {side.point.run_id} {side.point.level}")
        if xs:
            traces.append(
                {"type": "scatter", "mode": "lines+markers", "name": vendor, "x": xs, "y": ys}
                | {"text": texts}
            )
    if not traces:
        return empty_figure(title, "No measured point meets any of the caps.")
    return chart_figure(
        traces,
        title=title,
        x_title="TTFT p99 cap (s)",
        y_title="$ per Mtok (output)",
        xaxis={"title": {"text": "TTFT p99 cap (s)"}, "type": "log"},
    )
