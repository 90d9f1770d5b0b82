"""How well apps/regressions/detection.py finds shifts of known size and place.

    python bench/change_points.py [--series 400] [--length 30] [--shift-sigmas 3] [--seed 1]

The noise is taken from real repeated runs: for every configuration × sequence ×
concurrency of InferenceX's shipped history (apps/catalog/reference/inferencex/
benchmarks-history.json) with at least 5 dated points, the robust standard deviation of
successive log differences of its throughput per GPU; the median over those series is the
noise level of the synthetic series (log scale, so a shift is relative). Each shifted series
has one shift of --shift-sigmas noise levels up or down at a random place (at least two
points from either end); a shift counts as found when a change point lies within 2 points
of its place. Clean series (same noise, no shift) measure false change points per 100
points. The baseline, measured in the same run on the same series, is the rule the
deployment page used before (a drop over 10% below the median of the previous 3 runs).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from apps.regressions.detection import find_changes, noise_sigma  # noqa: E402

HISTORY = ROOT / "apps/catalog/reference/inferencex/benchmarks-history.json"
IDENTITY = (
    "hardware", "framework", "model", "precision", "spec_method", "disagg", "prefill_tp",
    "prefill_ep", "decode_tp", "decode_ep", "num_prefill_gpu", "num_decode_gpu", "isl", "osl",
    "conc",
)  # fmt: skip


def real_noise() -> tuple[float, int]:
    series: dict[tuple, list[tuple[str, float]]] = defaultdict(list)
    for row in json.loads(HISTORY.read_text()):
        value = (row.get("metrics") or {}).get("tput_per_gpu")
        if value and value > 0:
            series[tuple(row.get(k) for k in IDENTITY)].append((row["date"], value))
    sigmas = []
    for points in series.values():
        if len(points) >= 5:
            x = np.log([v for _, v in sorted(points)])
            sigmas.append(noise_sigma(x))
    return statistics.median(sigmas), len(sigmas)


def baseline_rule(values: np.ndarray) -> list[int]:
    """The fixed-threshold rule: a point 10% below the median of the 3 before it."""
    found = []
    for i in range(1, len(values)):
        window = sorted(values[max(0, i - 3) : i])
        if values[i] < 0.9 * window[len(window) // 2]:
            found.append(i)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--series", type=int, default=400)
    parser.add_argument("--length", type=int, default=30)
    parser.add_argument("--shift-sigmas", type=float, default=3.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    sigma, used = real_noise()
    rng = np.random.default_rng(args.seed)
    print(f"noise from {used} real InferenceX series: sigma = {sigma:.4f} (log scale)")

    found = found_base = 0
    false_ours = false_base = clean_points = 0
    for _ in range(args.series):
        place = int(rng.integers(2, args.length - 1))
        sign = rng.choice([-1.0, 1.0])
        x = rng.normal(0, sigma, args.length)
        x[place:] += sign * args.shift_sigmas * sigma
        values = np.exp(x) * 1000
        changes = find_changes(list(values))
        found += any(abs(c.index - place) <= 2 for c in changes)
        # The baseline rule only looks for drops; it is scored on the drops alone below.
        clean = np.exp(rng.normal(0, sigma, args.length)) * 1000
        false_ours += len(find_changes(list(clean)))
        false_base += len(baseline_rule(clean))
        clean_points += args.length
    drops = 0
    for _ in range(args.series):
        place = int(rng.integers(2, args.length - 1))
        x = rng.normal(0, sigma, args.length)
        x[place:] -= args.shift_sigmas * sigma
        drops += 1
        found_base += any(abs(i - place) <= 2 for i in baseline_rule(np.exp(x)))
    shift_pct = 100 * math.expm1(args.shift_sigmas * sigma)
    print(
        f"{args.series} series of {args.length} points, one shift of {args.shift_sigmas} sigma "
        f"(~{shift_pct:.1f}%) each, and {args.series} clean series ({clean_points} points)"
    )
    print(
        f"change points (PELT + t-test): found {found}/{args.series} = "
        f"{100 * found / args.series:.1f}% within 2 points; "
        f"{100 * false_ours / clean_points:.2f} false per 100 clean points"
    )
    print(
        f"baseline (10% below median of previous 3, drops only): found {found_base}/{drops} = "
        f"{100 * found_base / drops:.1f}% of drops within 2 points; "
        f"{100 * false_base / clean_points:.2f} false per 100 clean points"
    )


if __name__ == "__main__":
    main()
