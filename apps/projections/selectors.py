"""Reads for projections: the shipped point model and bands, and the projected curves pages
show.

Projections are computed when read, never stored as runs: a projection is not a
measurement, and there is nothing to rank or claim-check. Everything a page gets carries
provenance "projected" and the 80% band of the shipped calibration (calibration.py): the
point model the nested evaluation chose on every accelerator, fitted on the shipped data,
with the band made for its stratum (seen or extrapolated), its held-out coverage and width.
"""

import math
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from apps.charts import chart_figure, scatter
from apps.projections import calibration, conformal, reference, validation
from apps.projections.model import (
    Architecture,
    Layout,
    Observation,
    Setup,
    Shape,
    closed_loop_tput,
)
from apps.projections.pointmodels import Fitted

PROVENANCE = "projected"


@cache
def shipped_calibration() -> calibration.Calibration:
    """The model choice and bands pages draw, read from the shipped artifact
    (bench/projection_error.py --write computes it; at page time it would take minutes)."""
    return calibration.Calibration(reference.calibration_data())


@dataclass(frozen=True)
class Validation:
    """How wrong the projection has been, as the pages state it: the held-out figures of
    the whole shipped data, and for the projection's stratum the share of held-out points
    inside their band and the band drawn, with its width."""

    points: int
    median_ape: float  # %, throughput at matched interactivity, all held-out points
    median_ape_at_concurrency: float  # %, throughput at matched concurrency
    coverage: float  # what the band promises (0.8)
    stratum: str  # "extrapolated": no run of this model, precision and engine on the family
    covered: float  # held-out points of this stratum inside their band, matched interactivity
    covered_at_concurrency: float
    band_along_curve: conformal.Band  # matched interactivity: both axes at once
    band_at_concurrency: conformal.Band  # matched concurrency: throughput
    picked: str  # the point model
    data_through: str

    @property
    def band(self) -> tuple[float, float]:
        """The throughput band at matched concurrency, as (low, high) multipliers."""
        return self.band_at_concurrency.low, self.band_at_concurrency.high


def held_out_validation(stratum: str) -> Validation:
    """The shipped calibration's figures, and its band for a projection in `stratum`."""
    shipped = shipped_calibration()
    overall = shipped.overall()
    held = shipped.stratum(stratum)
    return Validation(
        points=overall.points,
        median_ape=overall.median_ape["interactivity"] or 0.0,
        median_ape_at_concurrency=overall.median_ape["concurrency"] or 0.0,
        coverage=shipped.coverage,
        stratum=stratum,
        covered=held.in_band["interactivity"] or 0.0,
        covered_at_concurrency=held.in_band["concurrency"] or 0.0,
        band_along_curve=shipped.band(stratum=stratum, matching="interactivity"),
        band_at_concurrency=shipped.band(stratum=stratum, matching="concurrency"),
        picked=shipped.picked.label,
        data_through=shipped.data["data_through"],
    )


@dataclass(frozen=True)
class NoProjection:
    """Why a page has no projection to show."""

    reason: str


NO_MODEL = "no model asked (a projection is of one model)"
NO_ARCHITECTURE = "no architecture for this model"
NO_PUBLISHED_RUN = "no published single-stream run of this model on MI355X in this shape"

# The published run a projection starts from (GLM 5.2 on MI355X, apps/catalog/reference/
# published.json): sglang, MXFP4, TP4 x DP2 on 8 GPUs, 213 tok/s single stream on the seed's
# 20k in / 1k out / 60% prefix cache. The projected accelerator runs the same layout.
PUBLISHED_ACCELERATOR = "MI355X"
PROJECTED_ACCELERATOR = "B200"
ENGINE = "sglang"
PRECISION = "fp4"
LAYOUT = Layout(gpus=4, tp=4)
REPLICAS = 2
CONCURRENCIES = [1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128]


def projection_date(observations: tuple[Observation, ...]) -> str:
    """The projection is of the engines as they run now: the newest run's date."""
    return max(o.date for o in observations if o.date)


@cache
def fitted_point_model() -> tuple[Fitted, str]:
    """The shipped point model fitted on the shipped data (once per process), and the date
    its projections are of."""
    observations, _ = reference.calibration_set()
    return shipped_calibration().picked.fit(observations), projection_date(observations)


def b200_projection(
    *, arch: Architecture, single_stream_tok_s: float, shape: Shape
) -> dict[str, Any]:
    """`arch` on 8xB200 projected by the shipped point model, in the published MI355X
    run's layout, scaled by how far the model is off that run's measured single stream
    (the anchor, on time per token: what the calibration does not know about this model
    and its engine settings, speculative decoding included), carried to B200."""
    accels = reference.accelerators()
    fitted, today = fitted_point_model()
    setups = {
        sku: Setup(arch, accels[sku], ENGINE, PRECISION, LAYOUT, shape)
        for sku in (PUBLISHED_ACCELERATOR, PROJECTED_ACCELERATOR)
    }
    single = fitted.curve(setups[PUBLISHED_ACCELERATOR], today, np.array([1.0]))
    anchor = (1 / single_stream_tok_s) / float(single.tpot_s[0])
    observations, _ = reference.calibration_set()
    kind = validation.stratum(setups[PROJECTED_ACCELERATOR], observations)
    checked = held_out_validation(kind)
    low, high = checked.band
    output_share = shape.output_tokens / (shape.input_tokens + shape.output_tokens)
    series = {}
    for sku, setup in setups.items():
        limit = setup.max_concurrency()
        drawn = fitted.curve(setup, today, np.array([c for c in CONCURRENCIES if c <= limit]))
        factor = fitted.efficiency(setup).throughput_factor
        tpots = drawn.tpot_s * anchor
        loop = closed_loop_tput(drawn.concurrency, shape, LAYOUT, drawn.ttft_s, tpots)
        tputs = factor * np.asarray(loop)
        points = list(zip(drawn.concurrency, tpots, drawn.ttft_s, tputs, strict=True))
        # (node concurrency, busy replicas, point): one stream keeps one replica busy and
        # the other idle, as the published single stream did; from two up, both serve.
        levels = [(1, 1, points[0])] if points else []
        levels += [(p[0] * REPLICAS, REPLICAS, p) for p in points]
        efficiency = fitted.efficiency(setup)
        series[sku] = {
            "sku": sku,
            "efficiency_key": " on ".join(efficiency.key),
            "efficiency_points": efficiency.points,
            "max_concurrency": limit,
            "points": [
                {
                    "concurrency": float(node),
                    "interactivity": float(1 / tpot),
                    "output_tput_per_gpu": float(tput * output_share * busy / REPLICAS),
                    "tput_per_gpu": float(tput * busy / REPLICAS),
                    "low": float(tput * output_share * busy / REPLICAS * low),
                    "high": float(tput * output_share * busy / REPLICAS * high),
                    "ttft_s": float(ttft),
                }
                for node, busy, (_, tpot, ttft, tput) in levels
            ],
        }
    return {
        "provenance": PROVENANCE,
        "model": arch.name,
        "anchor": anchor,
        "series": series,
        "band": checked.band,
        "validation": checked,
        "gpus": LAYOUT.gpus * REPLICAS,
        "date": today,
    }


BASIS_KEYS = {"output": "output_tput_per_gpu", "total": "tput_per_gpu"}


def _basis_value(point: dict[str, float], basis: str) -> float:
    if basis == "input":
        return point["tput_per_gpu"] - point["output_tput_per_gpu"]
    return point[BASIS_KEYS[basis]]


def widened_curve(
    x: list[float], y: list[float], q: float, *, grid: int = 80
) -> tuple[list[float], list[float]]:
    """The region within x[e^-q, e^q] of the curve (x, y) on both axes at once (the band at
    matched interactivity, conformal.py), as one closed outline: upper edge left to right,
    lower edge back. The curve is the polyline through its points, in their order, in log
    space; at each of `grid` abscissae the edge is the highest (lowest) the polyline gets
    within e^q along x, times e^q (e^-q): exact there."""
    lx, ly = np.log(x), np.log(y)
    if len(lx) == 1:
        lx, ly = np.repeat(lx, 2), np.repeat(ly, 2)
    ax, bx, ay, by = lx[:-1], lx[1:], ly[:-1], ly[1:]
    xs = np.linspace(lx.min() - q, lx.max() + q, grid)[:, None]
    lo = np.maximum(np.minimum(ax, bx), xs - q)  # each segment clipped to the window
    hi = np.minimum(np.maximum(ax, bx), xs + q)
    inside = lo <= hi + 1e-12
    flat = ax == bx  # a vertical segment: both its ends count
    slope = np.where(flat, 0.0, (by - ay) / np.where(flat, 1.0, bx - ax))
    at_lo = np.where(flat, ay, ay + (lo - ax) * slope)
    at_hi = np.where(flat, by, ay + (hi - ax) * slope)
    top = np.where(inside, np.maximum(at_lo, at_hi), -np.inf).max(axis=1) + q
    bottom = np.where(inside, np.minimum(at_lo, at_hi), np.inf).min(axis=1) - q
    xs = xs[:, 0]
    outline_x = np.exp(np.concatenate([xs, xs[::-1]]))
    outline_y = np.exp(np.concatenate([top, bottom[::-1]]))
    return outline_x.tolist(), outline_y.tolist()


def band_label(checked: Validation) -> str:
    kind = ", extrapolated" if checked.stratum == "extrapolated" else ""
    return (
        f"B200 projected: {checked.coverage:.0%} band, from held-out errors "
        f"(matched interactivity{kind}; held out, {checked.covered:.0%} inside; "
        f"×{checked.band_along_curve.width:.2f} wide)"
    )


def projected_traces(projection: dict[str, Any], *, basis: str = "output") -> list[dict]:
    """The B200 projection as two traces: its 80% band at matched interactivity (the curve
    widened along both axes, filled) and its curve (dashed)."""
    checked: Validation = projection["validation"]
    points = projection["series"]["B200"]["points"]
    x = [p["interactivity"] for p in points]
    y = [_basis_value(p, basis) for p in points]
    curve = {
        "type": "scatter",
        "mode": "lines+markers",
        "name": f"8×B200 {ENGINE} {PRECISION.upper()} — projected",
        "x": x,
        "y": y,
        "line": {"dash": "dash", "color": "#D55E00"},
        "marker": {"symbol": "circle-open", "color": "#D55E00"},
        "hovertemplate": f"projected<br>%{{x:.0f}} tok/s/user<br>%{{y:.0f}} {basis} tok/s/GPU"
        "<extra>B200 projected</extra>",
        "meta": {"provenance": PROVENANCE, "role": "curve"},
    }
    if not math.isfinite(checked.band_along_curve.q):  # too few held-out errors: no band
        return [curve]
    band_x, band_y = widened_curve(x, y, checked.band_along_curve.q)
    return [
        {
            "type": "scatter",
            "mode": "lines",
            "name": band_label(checked),
            "x": band_x,
            "y": band_y,
            "fill": "toself",
            "fillcolor": "rgba(213,94,0,0.15)",
            "line": {"width": 0, "color": "#D55E00"},
            "hoverinfo": "skip",
            "meta": {
                "provenance": PROVENANCE,
                "role": "band",
                "matching": "interactivity",
                "q": checked.band_along_curve.q,
                "coverage": checked.coverage,
                "covered": checked.covered,
                "width": checked.band_along_curve.width,
            },
        },
        curve,
    ]


def projection_figure(projection: dict[str, Any], *, measured: list[dict[str, float]]) -> dict:
    """B200 dashed with its band, MI355X's model dotted, the published point."""
    mi = projection["series"]["MI355X"]["points"]
    traces = projected_traces(projection)
    traces.append(
        scatter(
            "8×MI355X — model calibrated with the published point",
            mi,
            "interactivity",
            "output_tput_per_gpu",
            mode="lines",
            line={"dash": "dot", "color": "#0072B2", "width": 1},
            meta={"provenance": PROVENANCE, "role": "model"},
        )
    )
    traces.append(
        scatter(
            "8×MI355X — published",
            measured,
            "interactivity",
            "output_tput_per_gpu",
            marker={"size": 10, "color": "#0072B2"},
            meta={"provenance": "published", "role": "measured"},
        )
    )
    return chart_figure(
        traces,
        title=f"{projection['model']}: B200 projected (dashed, with its band)",
        x_title="interactivity (tok/s/user)",
        y_title="output tok/s per GPU",
    )


def published_check(projection: dict[str, Any], published: dict[str, Any]) -> dict[str, Any]:
    """The projection's B200 peak beside B200's published figure on the same workload (the
    write-ups' per-node tok/s, whose kind they do not state): the projection's error on it
    under both readings, and whether the figure lies inside the projection's band there."""
    peak = max(projection["series"]["B200"]["points"], key=lambda p: p["output_tput_per_gpu"])
    gpus = projection["gpus"]
    figure = published["reported_node_throughput_tok_s"] / gpus
    readings = {"output": peak["output_tput_per_gpu"], "total": peak["tput_per_gpu"]}
    return {
        "published_per_gpu": figure,
        "published_node": published["reported_node_throughput_tok_s"],
        "request_rate_rps": published.get("request_rate_rps"),
        "peak": peak,
        # projected / published - 1, reading the published figure as output, then as total
        "errors": {kind: value / figure - 1 for kind, value in readings.items()},
        "errors_text": {kind: f"{value / figure - 1:+.0%}" for kind, value in readings.items()},
        "inside_band": peak["low"] <= figure <= peak["high"],
        "source_urls": published.get("source_urls", []),
    }


def story_context(
    final: dict[str, Any], published_b200: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The story page's projection section, from a published MI355X configuration (its
    model's architecture must be shipped), checked against B200's published figure on the
    same workload where one is shipped."""
    scenario = final["scenario"]
    shape = Shape(
        input_tokens=scenario["input_tokens"],
        output_tokens=scenario["output_tokens"],
        prefix_cache_hit_rate=scenario.get("prefix_cache_hit_rate") or 0.0,
    )
    single = float(final["single_stream_tok_s"])
    arch = reference.architectures()[str(final["model"]).lower()]
    projection = b200_projection(arch=arch, single_stream_tok_s=single, shape=shape)
    measured = [{"interactivity": single, "output_tput_per_gpu": single / final["gpus"]}]
    projection["figure"] = projection_figure(projection, measured=measured)
    projection["b200_points"] = projection["series"]["B200"]["points"]
    projection["sources"] = reference.sources()
    projection["published_check"] = (
        published_check(projection, published_b200) if published_b200 else None
    )
    return projection


def projection_for_shape(
    *,
    model: str | None,
    input_tokens: float | None,
    output_tokens: float | None,
    cache_hit_rate: float | None,
) -> dict[str, Any] | NoProjection:
    """The projection of `model` for a workload's shape, or why there is none: it needs the
    model's architecture in the reference data (never another model's in its place) and a
    published single-stream run of that model on MI355X in the same shape (today: GLM 5.2
    at 20k/1k/60%); input_tokens None: any shape."""
    from apps.catalog.models import PublishedFigure

    if not model:
        return NoProjection(NO_MODEL)
    architectures = reference.architectures()
    arch = architectures.get(model.lower())
    if arch is None:
        return NoProjection(NO_ARCHITECTURE)
    wanted = (input_tokens, output_tokens, cache_hit_rate or 0)
    figures = PublishedFigure.objects.filter(payload__accelerator=PUBLISHED_ACCELERATOR)
    for figure in figures.order_by("key"):
        payload = figure.payload
        published = payload.get("scenario") or {}
        shape = (
            published.get("input_tokens"),
            published.get("output_tokens"),
            published.get("prefix_cache_hit_rate") or 0,
        )
        same_model = architectures.get(str(payload.get("model") or "").lower()) == arch
        any_shape = input_tokens is None
        if same_model and (any_shape or shape == wanted) and payload.get("single_stream_tok_s"):
            return story_context(payload)
    return NoProjection(NO_PUBLISHED_RUN)


def board_projection(*, model: str | None, scenario: Any) -> dict[str, Any] | NoProjection:
    """What the board can add, opt-in, for its model and scenario."""
    if scenario is None:
        return NoProjection(NO_PUBLISHED_RUN)
    return projection_for_shape(
        model=model,
        input_tokens=scenario.input_tokens,
        output_tokens=scenario.output_tokens,
        cache_hit_rate=scenario.prefix_cache_hit_rate or 0,
    )
