"""The shipped calibration: the point model and 80% bands pages use, and how the procedure
did held out (nested leave-one-accelerator-out, and across vendors).

Computing it takes a minute or two (apps/projections/nested.py), so it is computed once,
by `python bench/projection_error.py --write`, into reference/calibration.json, and pages
only read that file. tests/apps/projections/test_calibration.py recomputes it from the
shipped data and compares, within a tolerance: a change to the data or to the method that
moves a figure fails there until the file is rewritten; one that moves nothing does not.

Pure: folds in, a JSON-ready dict out (`build`); a dict in, bands out (`Calibration`).
Reading and writing the file is apps/projections/reference.py's.
"""

import math
from dataclasses import dataclass
from typing import Any

from apps.projections import conformal
from apps.projections.nested import MATCHINGS, Evaluation, NestedRow, Selection, nested_table
from apps.projections.pointmodels import CANDIDATES, Candidate

VERSION = 2

# What each matching's band bounds, for pages and for the artifact's own readers.
MATCHING_TEXT = {
    "interactivity": (
        "along the curve: a measured point lies within x[low, high] of the projected curve "
        "on both axes at once (interactivity and throughput per GPU)"
    ),
    "concurrency": (
        "at the same concurrency: measured throughput per GPU lies within x[low, high] of "
        "the projected throughput"
    ),
}
SUMMARY_BY = ("model", "engine", "sku", "vendor", "precision", "stratum")


def _q(value: float) -> float | None:
    """JSON has no infinity: an infinite quantile (too few errors to promise the coverage)
    is written as null."""
    return None if math.isinf(value) else round(value, 6)


def _r(value: float | None, digits: int = 4) -> float | None:
    return None if value is None or math.isinf(value) else round(value, digits)


def _row(row: NestedRow) -> dict[str, Any]:
    return {
        "group": row.group,
        "points": row.points,
        "unreached": row.unreached,
        "median_ape": {m: _r(row.median_ape[m]) for m in MATCHINGS},
        "p90_ape": {m: _r(row.p90_ape[m]) for m in MATCHINGS},
        "in_band": {m: _r(row.covered[m]) for m in MATCHINGS},
        "width": {m: _r(row.width[m]) for m in MATCHINGS},
    }


def _selection(chosen: Selection) -> dict[str, Any]:
    return {
        "picked": chosen.picked.label,
        "scores": {label: _r(v) for label, v in chosen.scores.items()},
        "q": {
            m: {stratum: _q(band.q) for stratum, band in sorted(chosen.bands[m].items())}
            for m in MATCHINGS
        },
    }


def build(
    evaluation: Evaluation,
    *,
    data_through: str,
    used: int,
    left_out: dict[str, dict[str, int]],
    coverage: float = conformal.COVERAGE,
) -> dict[str, Any]:
    """The artifact: the point model and bands chosen on every accelerator (`final`, what
    pages use); per held-out accelerator, what its nested fold chose and made without it
    and how its points fared; the held-out summaries; the cross-vendor folds.
    Deterministic: the same inputs give the same file byte for byte."""
    folds, final, cross = evaluation.folds, evaluation.final, evaluation.cross
    accelerators = {}
    for fold in folds:
        [row] = [r for r in nested_table([fold], by="sku") if r.group == fold.sku]
        accelerators[fold.sku] = {**_selection(fold.selection), "held_out": _row(row)}
    return {
        "about": (
            "The projection's point model and 80% bands (docs/methodology.md#projections). "
            "final: chosen and made on every accelerator, what pages use; accelerators: "
            "each nested fold, without that accelerator; held_out: how the nested folds' "
            "projections fared; cross_vendor: chosen on one vendor, judged on the other. "
            "q is the natural log of a band's half-width: the band is x[e^-q, e^q]; null: "
            "too few errors for a band. Written by: python bench/projection_error.py --write"
        ),
        "version": VERSION,
        "coverage": coverage,
        "data_through": data_through,
        "observations": {"used": used, "left_out": left_out},
        "matchings": MATCHING_TEXT,
        "candidates": [c.label for c in CANDIDATES],
        "final": _selection(final),
        "accelerators": accelerators,
        "held_out": {by: [_row(row) for row in nested_table(folds, by=by)] for by in SUMMARY_BY},
        "cross_vendor": [
            {**_selection(fold.selection), "fold": fold.sku, "rows": [
                _row(row) for row in nested_table([fold], by="sku")
            ]}
            for fold in cross
        ],
    }  # fmt: skip


@dataclass(frozen=True)
class SummaryRow:
    group: str
    points: int
    unreached: int
    median_ape: dict[str, float | None]  # by matching, %
    p90_ape: dict[str, float | None]  # by matching, %
    in_band: dict[str, float | None]  # by matching, share
    width: dict[str, float | None]  # by matching, median hi/lo


@dataclass(frozen=True)
class Calibration:
    """The artifact as pages read it."""

    data: dict[str, Any]

    @property
    def coverage(self) -> float:
        return float(self.data["coverage"])

    @property
    def picked(self) -> Candidate:
        """The point model the procedure chose on every accelerator."""
        label = self.data["final"]["picked"]
        found = [c for c in CANDIDATES if c.label == label]
        if not found:
            raise LookupError(f"the shipped calibration picked {label!r}, no longer a candidate")
        return found[0]

    def band(self, *, stratum: str, matching: str) -> conformal.Band:
        """The band pages draw for a projection in `stratum` (made on every accelerator)."""
        q = self.data["final"]["q"][matching][stratum]
        return conformal.Band.from_quantile(
            math.inf if q is None else q,
            coverage=self.coverage,
            scores=self.data["observations"]["used"],
            stratum=stratum,
        )

    def accelerator(self, sku: str) -> dict[str, Any] | None:
        return self.data["accelerators"].get(sku.upper())

    def summary(self, by: str) -> list[SummaryRow]:
        return [SummaryRow(**row) for row in self.data["held_out"][by]]

    def overall(self) -> SummaryRow:
        return self.summary("model")[-1]

    def stratum(self, name: str) -> SummaryRow:
        """How held-out points of a stratum fared (their share in band, the bands' width)."""
        [row] = [r for r in self.summary("stratum") if r.group == name]
        return row


def differences(
    shipped: Any, recomputed: Any, *, tolerance: float = 1e-3, path: str = ""
) -> list[str]:
    """Where two artifacts disagree: a number by more than `tolerance` of its size (or of 1,
    whichever is larger: floating-point sums may differ in their last digits from one
    machine to another), anything else not equal; each as its path in the file."""
    if isinstance(shipped, dict) and isinstance(recomputed, dict):
        found = [f"{path}/{k}: only in one" for k in shipped.keys() ^ recomputed.keys()]
        for key in shipped.keys() & recomputed.keys():
            found += differences(
                shipped[key], recomputed[key], tolerance=tolerance, path=f"{path}/{key}"
            )
        return sorted(found)
    if isinstance(shipped, list) and isinstance(recomputed, list):
        if len(shipped) != len(recomputed):
            return [f"{path}: {len(shipped)} entries, recomputed {len(recomputed)}"]
        found = []
        for i, (a, b) in enumerate(zip(shipped, recomputed, strict=True)):
            found += differences(a, b, tolerance=tolerance, path=f"{path}/{i}")
        return found
    numbers = (int, float)
    if isinstance(shipped, numbers) and isinstance(recomputed, numbers):
        scale = max(1.0, abs(shipped), abs(recomputed))
        if abs(shipped - recomputed) <= tolerance * scale:
            return []
    elif shipped == recomputed:
        return []
    return [f"{path}: shipped {shipped!r}, recomputed {recomputed!r}"]
