"""A cost claim checked with a projection, only when the user asks: labelled, never folded
into the claim's verdict. Pure."""

from statistics import median
from typing import Any

import numpy as np


def projected_throughput_ratio(projection: dict[str, Any]) -> dict[str, float] | None:
    """MI355X ÷ B200 output tok/s per GPU at matched interactivity, over the interactivity
    range both curves cover; the range puts B200 anywhere in its 80% band at matched
    concurrency, projection["band"] (a B200 that does better than projected makes the
    ratio smaller)."""
    mi = sorted(projection["series"]["MI355X"]["points"], key=lambda p: p["interactivity"])
    b200 = projection["series"]["B200"]["points"]
    xs = [p["interactivity"] for p in mi]
    ys = [p["output_tput_per_gpu"] for p in mi]
    ratios = [
        float(np.interp(p["interactivity"], xs, ys)) / p["output_tput_per_gpu"]
        for p in b200
        if xs[0] <= p["interactivity"] <= xs[-1]
    ]
    if not ratios:
        return None
    band_low, band_high = projection["band"]
    central = median(ratios)
    return {
        "ratio": central,
        "low": central / band_high,
        "high": central / band_low,
        "levels": len(ratios),
    }


def projected_cost_ratios(
    ratio: dict[str, float], *, usd_per_gpu_hour_a: float, usd_per_gpu_hour_b: float
) -> dict[str, float]:
    """Cost ratio A÷B = (price A ÷ price B) ÷ throughput ratio, at the ratio and its range."""
    prices = usd_per_gpu_hour_a / usd_per_gpu_hour_b
    return {
        "cost_ratio": prices / ratio["ratio"],
        "cost_low": prices / ratio["high"],
        "cost_high": prices / ratio["low"],
    }
