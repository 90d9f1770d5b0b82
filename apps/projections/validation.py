"""Leave-one-accelerator-out validation of the projection model, and the error band.

Pure: InferenceX rows in, error rows out. For each accelerator: calibrate on every other
accelerator's points, project the held-out one's configurations from its specifications
alone, and compare with its measurements at matched interactivity (tok/s/user).
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from apps.projections.model import (
    DEFAULT_FALLBACK_ORDER,
    Accelerator,
    Architecture,
    Layout,
    Observation,
    Precision,
    Setup,
    Shape,
    at_interactivity,
    calibrate,
    project,
)

# The band's quantiles of measured / projected: a 90% interval of the held-out ratios.
BAND_QUANTILES = (0.05, 0.95)


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


def leave_one_accelerator_out(
    observations: Sequence[Observation], *, order: str = DEFAULT_FALLBACK_ORDER
) -> list[HeldOutPoint]:
    out: list[HeldOutPoint] = []
    for sku in sorted({o.accel.sku for o in observations}):
        train = [o for o in observations if o.accel.sku != sku]
        held = [o for o in observations if o.accel.sku == sku]
        fits = {}
        for obs in held:
            if obs.engine not in fits:
                fits[obs.engine] = calibrate(train, engine=obs.engine, accel=obs.accel, order=order)
            eff = fits[obs.engine]
            setup = Setup(
                arch=obs.arch,
                accel=obs.accel,
                precision=Precision.named(obs.precision_name),
                layout=obs.layout,
                shape=obs.shape,
                efficiency=eff,
            )
            point = at_interactivity(setup, obs.interactivity)
            out.append(
                HeldOutPoint(
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
                )
            )
    return out


@dataclass(frozen=True)
class ErrorRow:
    group: str
    points: int
    unreached: int
    median_ape: float | None
    p90_ape: float | None
    median_ape_at_concurrency: float | None
    covered: float | None  # share of the points inside the band (out of sample)


def band_from(points: Iterable[HeldOutPoint]) -> tuple[float, float] | None:
    ratios = [p.ratio for p in points if p.ratio is not None]
    if not ratios:
        return None
    low, high = np.quantile(ratios, BAND_QUANTILES)
    return float(low), float(high)


def _row(group: str, points: list[HeldOutPoint], covered: list[bool]) -> ErrorRow:
    errors = [p.abs_pct_error for p in points if p.abs_pct_error is not None]
    at_c = [p.abs_pct_error_at_concurrency for p in points]
    at_c = [e for e in at_c if e is not None]
    return ErrorRow(
        group=group,
        points=len(points),
        unreached=len(points) - len(errors),
        median_ape=float(np.median(errors)) if errors else None,
        p90_ape=float(np.quantile(errors, 0.9)) if errors else None,
        median_ape_at_concurrency=float(np.median(at_c)) if at_c else None,
        covered=sum(covered) / len(covered) if covered else None,
    )


def out_of_sample_coverage(points: Sequence[HeldOutPoint]) -> list[bool]:
    """Whether each held-out point lies in the band built from the *other* accelerators'
    held-out ratios (so the coverage is not measured on the data that made the band). A
    point the projection cannot reach is not covered."""
    bands = {sku: band_from(p for p in points if p.sku != sku) for sku in {p.sku for p in points}}
    covered = []
    for p in points:
        band = bands[p.sku]
        covered.append(bool(band and p.ratio is not None and band[0] <= p.ratio <= band[1]))
    return covered


def error_table(points: Sequence[HeldOutPoint], *, by: str) -> list[ErrorRow]:
    """Median and 90th-percentile absolute % error per accelerator (`by="sku"`) or per
    scenario (`by="scenario"`), with the out-of-sample coverage of the band; last, all."""
    covered = out_of_sample_coverage(points)
    rows = []
    for group in sorted({getattr(p, by) for p in points}):
        idx = [i for i, p in enumerate(points) if getattr(p, by) == group]
        rows.append(_row(group, [points[i] for i in idx], [covered[i] for i in idx]))
    rows.append(_row("all", list(points), covered))
    return rows
