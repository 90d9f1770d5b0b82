"""Pure Plotly figure builders for accuracy pages."""

from typing import Any


def trade_figure(trade: list[dict[str, Any]], *, title: str) -> dict[str, Any]:
    """Accuracy delta (points, with error bars) against throughput gain (%), per quantization."""
    shown = [t for t in trade if t["throughput_gain_pct"] is not None]
    return {
        "data": [
            {
                "type": "scatter",
                "mode": "markers+text",
                "x": [t["throughput_gain_pct"] for t in shown],
                "y": [t["accuracy_delta_points"] for t in shown],
                "text": [t["quantization"] for t in shown],
                "textposition": "top center",
                "error_y": {"type": "data", "array": [t["error_points"] for t in shown]},
                "marker": {"size": 12, "color": "#3451b2"},
                "hovertemplate": "%{text}: %{x:+.1f}% throughput, %{y:+.2f} points<extra></extra>",
            }
        ],
        "layout": {
            "title": {"text": title},
            "margin": {"l": 60, "r": 20, "t": 40, "b": 50},
            "xaxis": {"title": {"text": "throughput gain vs baseline (%)"}, "zeroline": True},
            "yaxis": {"title": {"text": "accuracy delta (points)"}, "zeroline": True},
            "paper_bgcolor": "#ffffff",
            "plot_bgcolor": "#ffffff",
        },
    }
