"""Leave-one-accelerator-out error of the projection model on the shipped InferenceX data.

    python bench/projection_error.py

For each accelerator: calibrate the efficiencies on all the others, project its
configurations from its specifications, and compare with its measurements at matched
interactivity. Prints the median and 90th-percentile absolute % error of total tok/s per
GPU per accelerator, per precision and per scenario, and how many held-out points fall in
the error band (5th-95th percentile of measured/projected on the *other* accelerators), and,
for comparison, the median error at the measured concurrency instead of the interactivity.
The baseline, measured in the same run: the bare roofline (efficiency 1, no calibration).
"""

import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "apps.settings")

from apps.projections import (
    reference,  # noqa: E402
    validation,  # noqa: E402
)
from apps.projections.model import Efficiency, Precision, Setup, at_interactivity  # noqa: E402


def _fmt(value: float | None, spec: str = ".1f") -> str:
    return "—" if value is None else format(value, spec)


def main() -> None:
    observations, skipped = validation.observations_from_inferencex(
        reference.inferencex_rows(),
        architectures=reference.architectures(),
        accelerators=reference.accelerators(),
    )
    print(f"InferenceX rows used: {len(observations)}; left out: {skipped}")
    points = validation.leave_one_accelerator_out(observations)
    for by in ("sku", "precision", "scenario"):
        print(f"\nleave-one-accelerator-out, by {by}: total tok/s/GPU at matched interactivity")
        print(
            f"{'group':<10}{'points':>7}{'unreached':>10}{'median APE%':>13}"
            f"{'p90 APE%':>10}{'in band':>9}{'median APE% at same conc.':>27}"
        )
        for row in validation.error_table(points, by=by):
            print(
                f"{row.group:<10}{row.points:>7}{row.unreached:>10}{_fmt(row.median_ape):>13}"
                f"{_fmt(row.p90_ape):>10}{_fmt(row.covered and row.covered * 100, '.0f'):>8}%"
                f"{_fmt(row.median_ape_at_concurrency):>27}"
            )
    band = validation.band_from(points)
    print(f"\nband (all held-out points): measured/projected in [{band[0]:.2f}, {band[1]:.2f}]")

    # Baseline: the same roofline with every inverse efficiency 1 and no overhead.
    bare = Efficiency(
        key=("*", "*"), decode=(1, 1, 1, 1, 0), prefill=(1, 0, 0), throughput_factor=1, points=0
    )
    errors = []
    for obs in observations:
        setup = Setup(
            arch=obs.arch,
            accel=obs.accel,
            precision=Precision.named(obs.precision_name),
            layout=obs.layout,
            shape=obs.shape,
            efficiency=bare,
        )
        point = at_interactivity(setup, obs.interactivity)
        if point:
            errors.append(abs(point.tput_per_gpu / obs.tput_per_gpu - 1) * 100)
    calibrated = [p.abs_pct_error for p in points if p.abs_pct_error is not None]
    print(
        f"baseline (uncalibrated roofline): median APE {np.median(errors):.1f}% on "
        f"{len(errors)}/{len(observations)} reachable points; calibrated, held out: "
        f"{np.median(calibrated):.1f}% -> ratio {np.median(errors) / np.median(calibrated):.1f}x"
    )


if __name__ == "__main__":
    main()
