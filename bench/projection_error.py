"""Nested leave-one-accelerator-out error of the projection model on the shipped data.

    python bench/projection_error.py            (a few minutes on two cores)
    python bench/projection_error.py --write    (the same, and writes the shipped bands,
                                                 apps/projections/reference/calibration.json)

Every shipped model and configuration the model describes (InferenceX's DeepSeek-R1, latest
and history; sglang cookbook's GLM 5.2 cells without speculative decoding). For each
accelerator, on the others only: choose the fallback order and whether to carry a model's
anchor (inner leave-one-accelerator-out), build the 80% conformal bands from the inner
held-out errors (apps/projections/conformal.py clustered_bands; the extrapolated band from a
second inner pass with each accelerator's whole family left out); then project the held-out
accelerator and judge it. Prints, per model, engine, accelerator, precision and stratum,
the median absolute % error of total tok/s per GPU and the share of held-out points inside
the band, for both matchings: at the measured interactivity (tok/s/user; the band is the
curve widened along both axes) and at the measured concurrency (throughput only).
The baseline, measured in the same run: the bare roofline (efficiency 1, no calibration).
"""

import argparse
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "apps.settings")

from apps.projections import (  # noqa: E402
    calibration,
    nested,
    reference,
)
from apps.projections.model import Efficiency, Precision, Setup, at_interactivity  # noqa: E402
from apps.projections.nested import MATCHINGS  # noqa: E402


def _fmt(value: float | None, spec: str = ".1f") -> str:
    return "—" if value is None else format(value, spec)


def _band_text(bands: dict) -> str:
    seen, extrapolated = bands["seen"], bands["extrapolated"]
    text = f"x{seen.low:.2f}-{seen.high:.2f} (extrap. x{extrapolated.high:.2f})"
    return f"{text:>32}"


def shipped_observations() -> list:
    observations, skipped = reference.calibration_observations()
    print(f"InferenceX and cookbook points used: {len(observations)}; left out: {skipped}")
    return observations


def print_nested(folds: list) -> None:
    print("\nnested leave-one-accelerator-out (choices and bands without the held-out one)")
    print(f"{'held out':<10}{'picked':>30}" + "".join(f"{m + ' band':>32}" for m in MATCHINGS))
    for f in folds:
        cells = "".join(_band_text(f.bands[m]) for m in MATCHINGS)
        print(f"{f.sku:<10}{f.picked:>30}{cells}")
    for by in ("model", "engine", "sku", "precision", "stratum"):
        print(f"\nby {by}: total tok/s/GPU, median abs. % error and share inside the 80% band")
        print(
            f"{'group':<14}{'points':>7}{'unreached':>10}"
            f"{'median APE% (interactivity)':>29}{'in band':>9}"
            f"{'median APE% (concurrency)':>27}{'in band':>9}"
        )
        for row in nested.nested_table(folds, by=by):
            print(
                f"{row.group:<14}{row.points:>7}{row.unreached:>10}"
                f"{_fmt(row.median_ape['interactivity']):>29}"
                f"{row.covered['interactivity'] * 100:>8.0f}%"
                f"{_fmt(row.median_ape['concurrency']):>27}"
                f"{row.covered['concurrency'] * 100:>8.0f}%"
            )


def print_engines(folds: list) -> None:
    """Why an engine's share can differ: the engines are not spread over the accelerators
    (atom runs on MI355X only), so an engine's share is its accelerators' share."""
    print("\nengines per held-out accelerator (points)")
    for f in folds:
        engines: dict[str, int] = {}
        for p in f.points:
            engines[p.point.engine] = engines.get(p.point.engine, 0) + 1
        print(f"{f.sku:<10}" + ", ".join(f"{e} {n}" for e, n in sorted(engines.items())))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--write", action="store_true", help="write apps/projections/reference/calibration.json"
    )
    args = parser.parse_args()
    observations = shipped_observations()
    folds = nested.nested_leave_one_accelerator_out(observations)
    print_nested(folds)
    print_engines(folds)
    if args.write:
        artifact = calibration.build(
            folds, inputs=reference.fingerprints(), data_through=reference.data_through()
        )
        print(f"wrote {reference.write_calibration(artifact)}")
    points = [p.point for f in folds for p in f.points]

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
