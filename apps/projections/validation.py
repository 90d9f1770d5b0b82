"""Leave-one-accelerator-out validation of the projection model, and the error band.

Pure: InferenceX rows and sglang cookbook cells in, error rows out. For each accelerator:
calibrate on every other accelerator's points, project the held-out one's configurations
from its specifications alone, and compare with its measurements at matched interactivity
(tok/s/user) and, separately, at the measured concurrency. The nested evaluation and the
conformal bands built from these held-out errors are in apps/projections/nested.py.
"""

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from apps.projections.model import (
    DEFAULT_FALLBACK_ORDER,
    Accelerator,
    Architecture,
    Efficiency,
    Layout,
    Observation,
    Precision,
    Setup,
    Shape,
    at_interactivity,
    calibrate,
    project,
)

Fit = Callable[..., Efficiency]


def observations_from_inferencex(
    rows: Iterable[dict[str, Any]],
    *,
    architectures: dict[str, Architecture],
    accelerators: dict[str, Accelerator],
) -> tuple[list[Observation], dict[str, int]]:
    """The rows the model describes: one instance aggregated (no disaggregated prefill and
    decode pools), no speculative decoding. Returns what was left out and why, counted."""
    kept: list[Observation] = []
    skipped: dict[str, int] = {}

    def skip(reason: str) -> None:
        skipped[reason] = skipped.get(reason, 0) + 1

    for row in rows:
        metrics = row["metrics"]
        if row["disagg"] or row.get("is_multinode"):
            skip("disaggregated or multi-node")
            continue
        if row.get("spec_method", "none") != "none":
            skip("speculative decoding")
            continue
        arch = architectures.get(row["model"].lower())
        accel = accelerators.get(row["hardware"].upper())
        if arch is None or accel is None:
            skip("no reference specification")
            continue
        if not all(metrics.get(k) for k in ("median_tpot", "median_ttft", "tput_per_gpu")):
            skip("missing metrics")
            continue
        tp = int(row["decode_tp"])
        kept.append(
            Observation(
                arch=arch,
                accel=accel,
                engine=row["framework"],
                precision_name=row["precision"],
                layout=Layout(gpus=tp, tp=tp, dp_attention=bool(row["decode_dp_attention"])),
                shape=Shape(input_tokens=int(row["isl"]), output_tokens=int(row["osl"])),
                concurrency=float(row["conc"]),
                tpot_s=float(metrics["median_tpot"]),
                ttft_s=float(metrics["median_ttft"]),
                interactivity=float(metrics["median_intvty"]),
                tput_per_gpu=float(metrics["tput_per_gpu"]),
            )
        )
    return kept, skipped


def _row_key(row: dict[str, Any]) -> tuple:
    names: tuple[str, ...] = ("hardware", "framework", "model", "precision", "spec_method")
    names += ("disagg",)
    names += ("decode_tp", "decode_ep", "decode_dp_attention", "isl", "osl", "conc", "date")
    return tuple(row.get(n) for n in names)


def inferencex_all_rows(
    latest: Iterable[dict[str, Any]], history: Iterable[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The latest snapshot and the history together, each run (configuration, load level
    and date) once: a configuration re-run on another date is another measurement."""
    return list({_row_key(r): r for r in [*history, *latest]}.values())


def observations_from_cookbook(
    data: dict[str, Any],
    *,
    architectures: dict[str, Architecture],
    accelerators: dict[str, Accelerator],
) -> tuple[list[Observation], dict[str, int]]:
    """sglang cookbook cells (p50 TTFT and TPOT, total tok/s per GPU) as observations.
    Speculative decoding is not modelled: those cells are counted out. A level with more
    clients than the server's --max-running-requests runs that many at once; the rest wait,
    so its TTFT is queueing (kept out of the TTFT fit) and its batch is the limit."""
    kept: list[Observation] = []
    skipped: dict[str, int] = {}
    arch = architectures.get(str(data["model"]).lower())
    scenario = data["scenario"]
    shape = Shape(input_tokens=scenario["input_tokens"], output_tokens=scenario["output_tokens"])
    for config in data["configurations"]:
        accel = accelerators.get(config["accelerator"].upper())
        points = config["points"]
        if config.get("speculative"):
            skipped["speculative decoding"] = skipped.get("speculative decoding", 0) + len(points)
            continue
        if arch is None or accel is None:
            skipped["no reference specification"] = skipped.get("no reference specification", 0)
            skipped["no reference specification"] += len(points)
            continue
        par = config["parallelism"]
        gpus = int(config["gpus"])
        limit = math.inf
        for flag in config.get("engine_flags", []):
            if flag.startswith("--max-running-requests"):
                limit = float(flag.split()[-1])
        for p in points:
            running = min(float(p["max_concurrency"]), limit)
            tpot = p["tpot_ms_p50"] / 1000
            kept.append(
                Observation(
                    arch=arch,
                    accel=accel,
                    engine=data["engine"],
                    precision_name=config["quantization"].lower(),
                    layout=Layout(
                        gpus=gpus, tp=int(par["tp"]), dp_attention=bool(par.get("dp_attention"))
                    ),
                    shape=shape,
                    concurrency=running,
                    tpot_s=tpot,
                    ttft_s=p["ttft_ms_p50"] / 1000,
                    interactivity=1 / tpot,
                    tput_per_gpu=float(p["tokens_per_sec_per_gpu"]),
                    ttft_queued=running < p["max_concurrency"],
                )
            )
    return kept, skipped


@dataclass(frozen=True)
class HeldOutPoint:
    sku: str
    engine: str
    precision: str
    scenario: str
    concurrency: float
    interactivity: float
    measured: float
    projected: float | None  # None: the projection never reaches this interactivity
    fallback: bool
    # at the measured concurrency instead: how much of the error is the matching's
    projected_at_concurrency: float | None = None
    model: str = ""
    # the held-out point's distance to the projected curve in log space, the larger of the
    # two axes' (interactivity, throughput) log ratios at the curve's nearest point: how far
    # the curve must be widened, along both axes, to hold the point (reached or not)
    curve_distance: float = math.inf
    # "seen": the model in this precision was measured on another accelerator of the same
    # family in the calibration; "extrapolated": it was not (the band is widened there)
    stratum: str = "seen"

    @property
    def ratio(self) -> float | None:
        return self.measured / self.projected if self.projected else None

    @property
    def abs_pct_error(self) -> float | None:
        return abs(self.projected / self.measured - 1) * 100 if self.projected else None

    @property
    def abs_pct_error_at_concurrency(self) -> float | None:
        value = self.projected_at_concurrency
        return abs(value / self.measured - 1) * 100 if value else None


def scenario_label(shape: Shape) -> str:
    return f"{shape.input_tokens // 1024}k/{shape.output_tokens // 1024}k"


def model_anchor(
    train: Sequence[Observation], model: str, *, order: str, fit: Fit = calibrate
) -> float:
    """Geometric mean of measured / modelled TPOT of `model` on the calibration's
    accelerators (1 when it has none there): what the calibration, mostly other models,
    does not know about this one. The story's GLM 5.2 anchor is the same idea."""
    logs, fits = [], {}
    for obs in train:
        if obs.arch.name != model:
            continue
        key = (obs.engine, obs.accel.sku)
        if key not in fits:
            fits[key] = fit(train, engine=obs.engine, accel=obs.accel, order=order)
        setup = Setup(obs.arch, obs.accel, obs.precision, obs.layout, obs.shape, fits[key])
        logs.append(math.log(obs.tpot_s / project(setup, obs.concurrency).tpot_s))
    return math.exp(sum(logs) / len(logs)) if logs else 1.0


# the projected curve sampled at these concurrencies (about 4% apart) for curve_distance
CURVE_CONCURRENCIES = np.geomspace(1, 16384, 240)


def log_curve(setup: Setup) -> np.ndarray:
    """(ln interactivity, ln throughput per GPU) along the projected curve."""
    points = [project(setup, float(c)) for c in CURVE_CONCURRENCIES]
    return np.log([[p.interactivity, p.tput_per_gpu] for p in points])


def curve_distance(curve: np.ndarray, interactivity: float, tput: float) -> float:
    """Smallest, over the curve, of the larger axis' |log ratio| (Chebyshev in log space)."""
    gaps = np.abs(curve - np.log([interactivity, tput]))
    return float(gaps.max(axis=1).min())


def stratum_of(obs: Observation, train: Sequence[Observation]) -> str:
    """Whether the projection extrapolates: no calibration point of the same model and
    precision on the held-out accelerator's family."""
    return stratum(obs.arch.name, obs.precision_name, obs.accel.family, train)


def stratum(model: str, precision: str, family: str, train: Sequence[Observation]) -> str:
    for o in train:
        same = o.arch.name == model and o.precision_name == precision
        if same and o.accel.family == family:
            return "seen"
    return "extrapolated"


def leave_one_accelerator_out(
    observations: Sequence[Observation],
    *,
    order: str = DEFAULT_FALLBACK_ORDER,
    anchored: bool = False,
    only: Iterable[str] | None = None,
    fit: Fit = calibrate,
    without_family: bool = False,
) -> list[HeldOutPoint]:
    """Each accelerator (or each of `only`) projected from a calibration on all the
    others: `fit` only ever sees observations of other accelerators. `without_family`:
    on the other families only, so every point is an extrapolation to a family the
    calibration has never seen (how the extrapolated band is made, nested.py)."""
    return list(
        _held_out(
            observations,
            order=order,
            anchored=anchored,
            only=only,
            fit=fit,
            without_family=without_family,
        )
    )


def _held_out(
    observations: Sequence[Observation],
    *,
    order: str,
    anchored: bool,
    only: Iterable[str] | None,
    fit: Fit,
    without_family: bool = False,
) -> Iterator[HeldOutPoint]:
    skus = sorted({o.accel.sku for o in observations})
    for sku in skus if only is None else sorted(only):
        held = [o for o in observations if o.accel.sku == sku]
        family = held[0].accel.family if held else None
        train = [
            o
            for o in observations
            if o.accel.sku != sku and not (without_family and o.accel.family == family)
        ]
        fits: dict[str, Efficiency] = {}
        anchors: dict[str, float] = {}
        strata: dict[tuple[str, str], str] = {}
        curves: dict[tuple, np.ndarray] = {}
        for obs in held:
            if obs.engine not in fits:
                fits[obs.engine] = fit(train, engine=obs.engine, accel=obs.accel, order=order)
            model = obs.arch.name
            if model not in anchors:
                anchors[model] = (
                    model_anchor(train, model, order=order, fit=fit) if anchored else 1.0
                )
            if (model, obs.precision_name) not in strata:
                strata[(model, obs.precision_name)] = stratum_of(obs, train)
            eff = fits[obs.engine]
            setup = Setup(
                arch=obs.arch,
                accel=obs.accel,
                precision=Precision.named(obs.precision_name),
                layout=obs.layout,
                shape=obs.shape,
                efficiency=eff,
                anchor=anchors[model],
            )
            point = at_interactivity(setup, obs.interactivity)
            key = (obs.engine, model, obs.precision_name, obs.layout, obs.shape)
            if key not in curves:
                curves[key] = log_curve(setup)
            yield HeldOutPoint(
                sku=sku,
                engine=obs.engine,
                precision=obs.precision_name,
                scenario=scenario_label(obs.shape),
                concurrency=obs.concurrency,
                interactivity=obs.interactivity,
                measured=obs.tput_per_gpu,
                projected=point.tput_per_gpu if point else None,
                fallback=eff.fallback,
                projected_at_concurrency=project(setup, obs.concurrency).tput_per_gpu,
                model=model,
                curve_distance=curve_distance(curves[key], obs.interactivity, obs.tput_per_gpu),
                stratum=strata[(model, obs.precision_name)],
            )


@dataclass(frozen=True)
class ErrorRow:
    group: str
    points: int
    unreached: int
    median_ape: float | None
    p90_ape: float | None
    median_ape_at_concurrency: float | None


def _row(group: str, points: list[HeldOutPoint]) -> ErrorRow:
    errors = [p.abs_pct_error for p in points if p.abs_pct_error is not None]
    at_c = [e for p in points if (e := p.abs_pct_error_at_concurrency) is not None]
    return ErrorRow(
        group=group,
        points=len(points),
        unreached=len(points) - len(errors),
        median_ape=float(np.median(errors)) if errors else None,
        p90_ape=float(np.quantile(errors, 0.9)) if errors else None,
        median_ape_at_concurrency=float(np.median(at_c)) if at_c else None,
    )


def error_table(points: Sequence[HeldOutPoint], *, by: str) -> list[ErrorRow]:
    """Median and 90th-percentile absolute % error per accelerator (`by="sku"`) or per
    scenario (`by="scenario"`); last, all. (The bands are nested.py's.)"""
    rows = [
        _row(g, [p for p in points if getattr(p, by) == g])
        for g in sorted({getattr(p, by) for p in points})
    ]
    rows.append(_row("all", list(points)))
    return rows
