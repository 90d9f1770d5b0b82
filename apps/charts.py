"""What every chart on the site shares: a series' colour and marker by its name, the layout,
the empty figure and the data table under each chart. Below every app that draws charts
(the leaderboard, costs and projections), so none of them imports another for it."""

import zlib
from collections.abc import Mapping, Sequence
from typing import Any

from workers import accelerator_specs

Figure = dict[str, Any]

# Colour-blind-safe palette (Okabe-Ito, then Tableau's darker tones). A series keeps its
# colour on every page because the colour is a hash of its name, not its position.
PALETTE = [
    "#0072B2",
    "#D55E00",
    "#009E73",
    "#CC79A7",
    "#E69F00",
    "#56B4E9",
    "#7F3C8D",
    "#11A579",
    "#3969AC",
    "#E73F74",
    "#80BA5A",
    "#4B4B8F",
]
SYMBOLS = ["circle", "square", "diamond", "triangle-up", "x", "star"]


# One colour per accelerator, on every chart and every page: fixed by its entry in the
# accelerators file (`colour`, a palette colour of its own; workers/accelerator_specs.py), not
# hashed from a series name, where two accelerators could share a colour and differ only by
# marker.
def accelerator_colours() -> dict[str, str]:
    """SKU (upper case) -> colour, for the accelerators the file gives one."""
    return {e["sku"].upper(): e["colour"] for e in accelerator_specs.entries() if e.get("colour")}


def accelerator_colour(sku: str) -> str:
    """The one colour of an accelerator on every chart. Accelerators without one share the
    colours no listed one has (by a hash of the SKU, so still the same on every page); they
    never take a listed accelerator's colour."""
    listed = accelerator_colours()
    known = listed.get(sku.upper())
    spare = [c for c in PALETTE if c not in listed.values()]
    return known or spare[zlib.crc32(sku.upper().encode()) % len(spare)]


def series_style(name: str, *, accelerator: str | None = None) -> dict[str, Any]:
    """The same colour and marker for a series name wherever it is drawn. A series of one
    accelerator takes that accelerator's colour (its marker still follows the name, so two
    series of one accelerator differ by marker); others a colour hashed from the name."""
    h = zlib.crc32(name.encode())
    colour = accelerator_colour(accelerator) if accelerator else PALETTE[h % len(PALETTE)]
    return {
        # 9 px: Plotly's default 6 px markers are hard to see, and to hover, on a phone.
        "marker": {
            "color": colour,
            "symbol": SYMBOLS[(h // len(PALETTE)) % len(SYMBOLS)],
            "size": 9,
        },
        "line": {"color": colour},
    }


def scatter(
    name: str, rows: Sequence[Mapping[str, Any]], x: str, y: str, *, mode: str = "markers", **extra
) -> dict[str, Any]:
    """A scatter trace of `rows`, reading its x and y from two keys of each row."""
    return {
        "type": "scatter",
        "mode": mode,
        "name": name,
        "x": [r[x] for r in rows],
        "y": [r[y] for r in rows],
        **extra,
    }


def chart_figure(
    traces: list[dict[str, Any]], *, title: str, x_title: str, y_title: str, **layout: Any
) -> Figure:
    """A figure in the site's layout; the y axis starts at zero (a throughput or a cost)."""
    return {
        "data": traces,
        "layout": {
            **LAYOUT,
            "title": {"text": title},
            "xaxis": {"title": {"text": x_title}},
            "yaxis": {"title": {"text": y_title}, "rangemode": "tozero"},
            **layout,
        },
    }


def empty_figure(title: str, reason: str) -> Figure:
    return {"data": [], "layout": {**LAYOUT, "title": {"text": title}}, "empty": reason}


def figure_table(figure: Figure) -> dict[str, Any]:
    """The chart as rows (series, x, y), for the data table each chart carries."""
    layout = figure.get("layout", {})
    x_title = layout.get("xaxis", {}).get("title", {}).get("text") or "x"
    y_title = layout.get("yaxis", {}).get("title", {}).get("text") or "y"
    rows = []
    for trace in figure.get("data", []):
        texts = trace.get("text") or []
        for i, (x, y) in enumerate(zip(trace.get("x", []), trace.get("y", []), strict=False)):
            label = texts[i] if isinstance(texts, list) and i < len(texts) else ""
            rows.append({"series": trace.get("name", ""), "label": label, "x": x, "y": y})
    return {"x_title": x_title, "y_title": y_title, "rows": rows}


LAYOUT: dict[str, Any] = {
    "margin": {"l": 60, "r": 20, "t": 80, "b": 50},
    # Plotly hides the legend when one series is drawn; the series' name (which accelerator and
    # precision, which scenario) is then exactly what the reader cannot tell from the chart.
    "showlegend": True,
    "hovermode": "closest",
    # Legend above the plot: below, a long one covers the x-axis title and crushes the plot.
    "legend": {"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
    "paper_bgcolor": "#ffffff",
    "plot_bgcolor": "#ffffff",
    "font": {"family": "system-ui, sans-serif", "size": 12},
}
