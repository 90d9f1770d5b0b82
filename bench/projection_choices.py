"""Nested leave-one-accelerator-out: the projection's fallback order chosen on the
calibration accelerators only, and the held-out error of that honest procedure.

    python bench/projection_choices.py

bench/projection_error.py scores one fixed fallback order, an order that was first picked
by looking at that same validation (so its figure is optimistic). Here, for each
held-out accelerator, every candidate order (apps/projections/model.py FALLBACK_ORDERS) is
scored by a leave-one-accelerator-out *inside* the other accelerators; the best inner
median (ties to the order listed first) is then used to project the held-out one. The
held-out accelerator's error never takes part in the choice. Prints the inner scores, the
order each fold picked, and the nested median error and band coverage beside the fixed
order's, both measured in this run.
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
from apps.projections.model import DEFAULT_FALLBACK_ORDER, FALLBACK_ORDERS  # noqa: E402


def inner_median(points: list[validation.HeldOutPoint]) -> float:
    """Median abs. % error with an unreached point as infinitely wrong (as the band does)."""
    errors = [p.abs_pct_error if p.abs_pct_error is not None else np.inf for p in points]
    return float(np.median(errors))


def main() -> None:
    observations, _ = validation.observations_from_inferencex(
        reference.inferencex_rows(),
        architectures=reference.architectures(),
        accelerators=reference.accelerators(),
    )
    orders = list(FALLBACK_ORDERS)
    print("inner leave-one-accelerator-out median APE% on the other accelerators, per order")
    print(f"{'held out':<10}" + "".join(f"{o:>20}" for o in orders) + f"{'picked':>20}")
    nested: list[validation.HeldOutPoint] = []
    for sku in sorted({o.accel.sku for o in observations}):
        train = [o for o in observations if o.accel.sku != sku]
        scores = [
            inner_median(validation.leave_one_accelerator_out(train, order=o)) for o in orders
        ]
        picked = orders[int(np.argmin(scores))]
        print(f"{sku:<10}" + "".join(f"{s:>20.1f}" for s in scores) + f"{picked:>20}")
        held = validation.leave_one_accelerator_out(observations, order=picked)
        nested += [p for p in held if p.sku == sku]
    fixed = validation.leave_one_accelerator_out(observations, order=DEFAULT_FALLBACK_ORDER)
    print("\nheld out (outer), total tok/s/GPU at matched interactivity")
    for name, points in (("fixed " + DEFAULT_FALLBACK_ORDER, fixed), ("nested choice", nested)):
        row = validation.error_table(points, by="sku")[-1]
        print(
            f"{name:<26} points {row.points}  unreached {row.unreached}  "
            f"median APE {row.median_ape:.1f}%  p90 {row.p90_ape:.1f}%"
        )


if __name__ == "__main__":
    main()
