"""Reads for projections: calibrations on the shipped data, and the projected curves pages show.

Projections are computed when read, never stored as runs: a projection is not a
measurement, and there is nothing to rank or claim-check. Everything a page gets carries
provenance "projected" and the 80% band of the shipped calibration (calibration.py): the
band its nested leave-one-accelerator-out made for that accelerator, for points where the
projection extrapolates when it does.
"""

import math
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from apps.charts import chart_figure, scatter
from apps.projections import calibration, conformal, reference, validation
from apps.projections.model import (
    Layout,
    Observation,
    Precision,
    ProjectedPoint,
    Setup,
    Shape,
    anchor_factor,
    calibrate,
    curve,
    max_concurrency,
    project,
)

PROVENANCE = "projected"


@cache
def inferencex_observations() -> tuple[Observation, ...]:
    found, _ = validation.observations_from_inferencex(
        reference.inferencex_rows(),
        architectures=reference.architectures(),
        accelerators=reference.accelerators(),
    )
    return tuple(found)


@cache
def shipped_calibration() -> calibration.Calibration:
    """The bands pages draw, read from the shipped artifact (bench/projection_error.py
    --write computes it; computing it at page time would take minutes)."""
    return calibration.Calibration(reference.calibration_data())


@dataclass(frozen=True)
class Validation:
    """How wrong the projection has been, as the pages state it: the held-out figures of
    the whole shipped data (overall), and the band for one projected accelerator."""

    points: int
    median_ape: float  # %, throughput at matched interactivity, all held-out points
    median_ape_at_concurrency: float  # %, throughput at matched concurrency
    covered: float  # share of held-out points inside their band, matched interactivity
    covered_at_concurrency: float
    coverage: float  # what the band promises (0.8)
    sku: str
    stratum: str  # "extrapolated": no run of this model and precision on sku's family
    band_along_curve: conformal.Band  # matched interactivity: both axes at once
    band_at_concurrency: conformal.Band  # matched concurrency: throughput
    data_through: str

    @property
    def band(self) -> tuple[float, float]:
        """The throughput band at matched concurrency, as (low, high) multipliers."""
        return self.band_at_concurrency.low, self.band_at_concurrency.high


def held_out_validation(sku: str, *, stratum: str) -> Validation:
    """The shipped calibration's figures, and its band for projecting `sku` in `stratum`."""
    shipped = shipped_calibration()
    overall = shipped.overall()
    along = shipped.band(sku, stratum=stratum, matching="interactivity")
    at_concurrency = shipped.band(sku, stratum=stratum, matching="concurrency")
    if along is None or at_concurrency is None:
        raise LookupError(f"the shipped calibration has no band for {sku}")
    return Validation(
        points=overall.points,
        median_ape=overall.median_ape["interactivity"] or 0.0,
        median_ape_at_concurrency=overall.median_ape["concurrency"] or 0.0,
        covered=overall.in_band["interactivity"] or 0.0,
        covered_at_concurrency=overall.in_band["concurrency"] or 0.0,
        coverage=shipped.coverage,
        sku=sku,
        stratum=stratum,
        band_along_curve=along,
        band_at_concurrency=at_concurrency,
        data_through=shipped.data["data_through"],
    )


# GLM 5.2 as published on MI355X (apps/catalog/reference/published.json): sglang, MXFP4,
# TP4 x DP2 on 8 GPUs, 20k in / 1k out / 60% prefix cache, 213 tok/s single stream.
GLM_ENGINE = "sglang"
GLM_PRECISION = "fp4"
GLM_LAYOUT = Layout(gpus=4, tp=4)
GLM_REPLICAS = 2
GLM_CONCURRENCIES = [1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128]


def glm_b200_projection(*, single_stream_tok_s: float, shape: Shape) -> dict[str, Any]:
    """GLM 5.2 on 8xB200 projected from the measured MI355X single stream and the B200
    datasheet: the model's TPOT on MI355X is scaled to the measured one (the anchor), and
    the same factor is carried to B200, whose efficiency comes from InferenceX's B200-family
    sglang runs."""
    arch = reference.architectures()["glm 5.2"]
    accels = reference.accelerators()
    observations = inferencex_observations()
    precision = Precision.named(GLM_PRECISION)
    setups = {}
    for sku in ("MI355X", "B200"):
        accel = accels[sku]
        setups[sku] = Setup(
            arch=arch,
            accel=accel,
            precision=precision,
            layout=GLM_LAYOUT,
            shape=shape,
            efficiency=calibrate(observations, engine=GLM_ENGINE, accel=accel),
        )
    anchor = anchor_factor(1 / single_stream_tok_s, project(setups["MI355X"], 1))
    # GLM 5.2 in this precision on B200's family is in none of the calibration's runs
    # (today): the band for extrapolations, which is never narrower.
    kind = validation.stratum(arch.name, GLM_PRECISION, accels["B200"].family, observations)
    checked = held_out_validation("B200", stratum=kind)
    low, high = checked.band
    series = {}
    for sku, setup in setups.items():
        anchored = Setup(**{**setup.__dict__, "anchor": anchor})
        limit = max_concurrency(arch, setup.accel, precision, GLM_LAYOUT, shape)
        points = [p for p in curve(anchored, GLM_CONCURRENCIES) if p.within_capacity]
        # (node concurrency, busy replicas, point): one stream keeps one replica busy and
        # the other idle, as the published single stream did; from two up, both serve.
        levels: list[tuple[float, int, ProjectedPoint]] = [(1, 1, points[0])] if points else []
        levels += [(p.concurrency * GLM_REPLICAS, GLM_REPLICAS, p) for p in points]
        series[sku] = {
            "sku": sku,
            "efficiency_key": " on ".join(setup.efficiency.key),
            "efficiency_points": setup.efficiency.points,
            "max_concurrency": limit,
            "points": [
                {
                    "concurrency": node,
                    "interactivity": p.interactivity,
                    "output_tput_per_gpu": p.output_tput_per_gpu * busy / GLM_REPLICAS,
                    "tput_per_gpu": p.tput_per_gpu * busy / GLM_REPLICAS,
                    "low": p.output_tput_per_gpu * busy / GLM_REPLICAS * low,
                    "high": p.output_tput_per_gpu * busy / GLM_REPLICAS * high,
                    "ttft_s": p.ttft_s,
                }
                for node, busy, p in levels
            ],
        }
    return {
        "provenance": PROVENANCE,
        "anchor": anchor,
        "series": series,
        "band": checked.band,
        "validation": checked,
        "gpus": GLM_LAYOUT.gpus * GLM_REPLICAS,
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
        f"(matched interactivity{kind})"
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
        "name": "8×B200 sglang FP4 — projected",
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
            },
        },
        curve,
    ]


def projection_figure(projection: dict[str, Any], *, measured: list[dict[str, float]]) -> dict:
    """B200 dashed with its band, MI355X's anchored model dotted, the published point."""
    mi = projection["series"]["MI355X"]["points"]
    traces = projected_traces(projection)
    traces.append(
        scatter(
            "8×MI355X — model fitted to the published point",
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
        title="GLM 5.2, 20k/1k/60%: B200 projected (dashed, with its band)",
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


def glm_story_context(
    final: dict[str, Any], published_b200: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The story page's projection section, from the last published MI355X configuration,
    checked against B200's published figure on the same workload where one is shipped."""
    scenario = final["scenario"]
    shape = Shape(
        input_tokens=scenario["input_tokens"],
        output_tokens=scenario["output_tokens"],
        prefix_cache_hit_rate=scenario.get("prefix_cache_hit_rate") or 0.0,
    )
    single = float(final["single_stream_tok_s"])
    projection = glm_b200_projection(single_stream_tok_s=single, shape=shape)
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
    input_tokens: float | None,
    output_tokens: float | None,
    cache_hit_rate: float | None,
    model: str | None = None,
) -> dict[str, Any] | None:
    """The projection, if any, for a workload's shape (and model): one needs the model's
    architecture in the reference data and a published single-stream figure of it on MI355X
    in the same shape (today: GLM 5.2 at 20k/1k/60%); input_tokens None: any shape."""
    from apps.catalog.models import PublishedFigure

    wanted = (input_tokens, output_tokens, cache_hit_rate or 0)
    figures = PublishedFigure.objects.filter(payload__accelerator="MI355X").order_by("key")
    for figure in figures:
        payload = figure.payload
        published = payload.get("scenario") or {}
        shape = (
            published.get("input_tokens"),
            published.get("output_tokens"),
            published.get("prefix_cache_hit_rate") or 0,
        )
        name = payload.get("model") or ""
        if model is not None and name != model:
            continue
        known = name.lower() in reference.architectures()
        any_shape = input_tokens is None
        if (any_shape or shape == wanted) and known and payload.get("single_stream_tok_s"):
            return glm_story_context(payload)
    return None


def board_projection(*, model: str | None, scenario: Any) -> dict[str, Any] | None:
    """What the board can add, opt-in, for its model and scenario (None: nothing)."""
    if not model or scenario is None:
        return None
    return projection_for_shape(
        input_tokens=scenario.input_tokens,
        output_tokens=scenario.output_tokens,
        cache_hit_rate=scenario.prefix_cache_hit_rate or 0,
        model=model,
    )
