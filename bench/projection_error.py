"""Nested leave-one-accelerator-out error of the projection on the shipped data.

    python bench/projection_error.py            (two to four minutes on two cores)
    python bench/projection_error.py --write    (the same, and writes the shipped model
                                                 choice and bands,
                                                 apps/projections/reference/calibration.json)

Every shipped model and configuration the point models describe (InferenceX's DeepSeek-R1,
latest and history, single-instance rows without speculative decoding; sglang cookbook's
GLM 5.2 cells without speculative decoding). For each accelerator, on the others only: pick
a point model among apps/projections/pointmodels.py CANDIDATES by an inner
leave-one-accelerator-out, make its 80% conformal bands from the inner held-out errors
(apps/projections/conformal.py balanced_bands), then project the held-out accelerator and
judge it. Prints, per model, engine, accelerator, vendor, precision and stratum, the median
and 90th-percentile absolute % error of total tok/s per GPU at matched interactivity and at
matched concurrency, the share of held-out points inside their band and the band's median
width (hi/lo); then the cross-vendor folds (chosen and calibrated on one vendor, judged on
the other); what one speed factor per accelerator (or per accelerator and engine, ...)
read from the held-out points themselves would leave (a bound on the curves, not a
projection: apps/projections/bounds.py); and the choice made on every accelerator (what
pages use).

The baseline, measured in the same run: each candidate projected held out without the
nested choice (plain leave-one-accelerator-out), issue 44's roofline first.
"""

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "apps.settings")

from apps.projections import (  # noqa: E402
    bounds,
    calibration,
    conformal,
    nested,
    reference,
    validation,
)
from apps.projections.nested import MATCHINGS, NestedPoint, NestedRow  # noqa: E402
from apps.projections.pointmodels import BASELINE, CANDIDATES, Candidate  # noqa: E402


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}%"


def _row_cells(row: NestedRow) -> str:
    cells = [row.group, str(row.points), str(row.unreached)]
    for m in MATCHINGS:
        cells += [
            _pct(row.median_ape[m]),
            _pct(row.p90_ape[m]),
            f"{row.covered[m]:.0%}",
            f"×{row.width[m]:.2f}",
        ]
    return "| " + " | ".join(cells) + " |"


HEADER = (
    "| {by} | points | unreached | median (interactivity) | p90 | in band | width | "
    "median (concurrency) | p90 | in band | width |\n| --- | --- | --- | --- | --- | --- | "
    "--- | --- | --- | --- | --- |"
)


def print_table(rows: list[NestedRow], by: str) -> None:
    print(HEADER.format(by=by))
    for row in rows:
        print(_row_cells(row))


def print_candidates(observations: list) -> None:
    """Each candidate held out without the nested choice: what the choice chooses among."""
    print("\nEach candidate, plain leave-one-accelerator-out (no nested choice; the baseline)")
    print("| candidate | median (interactivity) | median (concurrency) | unreached | vs baseline |")
    print("| --- | --- | --- | --- | --- |")
    baseline = None
    for candidate in CANDIDATES:
        points = validation.leave_one_accelerator_out(observations, candidate)
        loose = {b: conformal.Band(0, float("inf"), 0.8, 0) for b in MATCHINGS}
        row = nested.table_row("all", [NestedPoint(p, candidate.label, loose) for p in points])
        medians = (row.median_ape["interactivity"] or 0, row.median_ape["concurrency"] or 0)
        if candidate == BASELINE:
            baseline = medians
        assert baseline is not None
        ratio = f"×{baseline[0] / medians[0]:.2f} / ×{baseline[1] / medians[1]:.2f} better"
        print(
            f"| {candidate.label} | {_pct(medians[0])} | {_pct(medians[1])} | "
            f"{row.unreached} | {ratio} |"
        )


def print_bounds(observations: list, candidate: Candidate) -> None:
    """What one speed factor per group, read from the held-out points themselves, would
    leave (apps/projections/bounds.py): not a projection, a bound on the curves."""
    print(
        f"\nWith one TPOT factor per group chosen from the held-out points themselves "
        f"({candidate.label}, plain leave-one-accelerator-out): what the curves allow"
    )
    print("| factor per | points | median (interactivity) | unreached | median (concurrency) |")
    print("| --- | --- | --- | --- | --- |")
    for b in bounds.offset_bounds(observations, candidate):
        print(
            f"| {b.level} | {b.points} | {_pct(b.median_ape['interactivity'])} | "
            f"{b.unreached['interactivity']} | {_pct(b.median_ape['concurrency'])} |"
        )


def _bands(selection: nested.Selection) -> str:
    return ", ".join(
        f"{m} seen ×{selection.bands[m]['seen'].width:.2f} extrap. "
        f"×{selection.bands[m]['extrapolated'].width:.2f}"
        for m in MATCHINGS
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--write", action="store_true", help="write apps/projections/reference/calibration.json"
    )
    args = parser.parse_args()
    observations, skipped = reference.calibration_observations()
    print(f"points used: {len(observations)}; left out: {skipped}")
    print_candidates(observations)

    evaluation = nested.evaluate(observations)
    folds, cross, final = evaluation.folds, evaluation.cross, evaluation.final
    print("\nNested folds: the point model each chose, and its bands' width (hi/lo)")
    for f in folds:
        print(f"{f.sku:<8} {f.picked:<40} {_bands(f.selection)}")
    for by in calibration.SUMMARY_BY:
        print(f"\nHeld out, nested, by {by}: total tok/s per GPU, abs. % error; 80% band")
        print_table(nested.nested_table(folds, by=by), by)

    print("\nCross-vendor: chosen and calibrated on one vendor's accelerators only")
    for f in cross:
        print(f"\n{f.sku}: picked {f.picked}; {_bands(f.selection)}")
        print_table(nested.nested_table([f], by="sku"), "held out")

    print_bounds(observations, final.picked)
    print(f"\nOn every accelerator (what pages use): {final.picked.label}; {_bands(final)}")
    print("inner scores: " + ", ".join(f"{k} {v:.1f}" for k, v in final.scores.items()))
    if args.write:
        artifact = calibration.build(
            evaluation,
            data_through=reference.data_through(),
            used=len(observations),
            left_out=skipped,
        )
        print(f"wrote {reference.write_calibration(artifact)}")


if __name__ == "__main__":
    main()
