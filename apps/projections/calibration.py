"""The shipped calibration: each accelerator's 80% bands from the nested held-out errors.

Computing the bands takes minutes (apps/projections/nested.py), so they are computed once,
by `python bench/projection_error.py --write`, into reference/calibration.json, and pages
only read that file. The file records the SHA-256 of every input it was computed from (the
shipped data and the method's modules): a test fails when one of them changes and the file
was not rewritten (tests/apps/projections/test_calibration.py).

Pure: folds in, a JSON-ready dict out (`build`); a dict in, bands out (`Calibration`).
Reading and writing the file is apps/projections/reference.py's.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from apps.projections import conformal
from apps.projections.nested import MATCHINGS, Fold, nested_table

VERSION = 1

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
SUMMARY_BY = ("model", "engine", "sku", "precision", "stratum")


def _q(value: float) -> float | None:
    """JSON has no infinity: an infinite quantile (too few errors to promise the coverage)
    is written as null."""
    return None if math.isinf(value) else round(value, 6)


def _share(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def build(
    folds: Sequence[Fold],
    *,
    inputs: dict[str, str],
    data_through: str,
    coverage: float = conformal.COVERAGE,
) -> dict[str, Any]:
    """The artifact: per held-out accelerator, the band quantiles its nested fold made
    (without it), and how its held-out points fared against them; then the held-out
    summary per model, engine, accelerator, precision and stratum. Deterministic: the same
    inputs give the same file byte for byte."""
    accelerators = {}
    for fold in folds:
        [row] = [r for r in nested_table([fold], by="sku") if r.group == fold.sku]
        accelerators[fold.sku] = {
            "picked": fold.picked,
            "q": {
                m: {stratum: _q(band.q) for stratum, band in sorted(fold.bands[m].items())}
                for m in MATCHINGS
            },
            "points": row.points,
            "unreached": row.unreached,
            "in_band": {m: _share(row.covered[m]) for m in MATCHINGS},
            "median_ape": {m: _share(row.median_ape[m]) for m in MATCHINGS},
        }
    summary = {
        by: [
            {
                "group": row.group,
                "points": row.points,
                "unreached": row.unreached,
                "median_ape": {m: _share(row.median_ape[m]) for m in MATCHINGS},
                "in_band": {m: _share(row.covered[m]) for m in MATCHINGS},
            }
            for row in nested_table(folds, by=by)
        ]
        for by in SUMMARY_BY
    }
    return {
        "about": (
            "80% bands of the projection, from nested leave-one-accelerator-out held-out "
            "errors (docs/methodology.md#projections). q is the natural log of the band's "
            "half-width: the band is x[e^-q, e^q]; null: too few errors for a band. "
            "Written by: python bench/projection_error.py --write"
        ),
        "version": VERSION,
        "coverage": coverage,
        "data_through": data_through,
        "inputs": dict(sorted(inputs.items())),
        "matchings": MATCHING_TEXT,
        "accelerators": accelerators,
        "held_out": summary,
    }


@dataclass(frozen=True)
class SummaryRow:
    group: str
    points: int
    unreached: int
    median_ape: dict[str, float | None]  # by matching, %
    in_band: dict[str, float | None]  # by matching, share


@dataclass(frozen=True)
class Calibration:
    """The artifact as pages read it."""

    data: dict[str, Any]

    @property
    def coverage(self) -> float:
        return float(self.data["coverage"])

    @property
    def inputs(self) -> dict[str, str]:
        return self.data["inputs"]

    def band(self, sku: str, *, stratum: str, matching: str) -> conformal.Band | None:
        """The band for projecting `sku` (made by its nested fold, without it); None when
        the accelerator was never held out (no measured points of it)."""
        entry = self.data["accelerators"].get(sku.upper())
        if entry is None:
            return None
        q = entry["q"][matching][stratum]
        return conformal.Band.from_quantile(
            math.inf if q is None else q,
            coverage=self.coverage,
            scores=entry["points"],
            stratum=stratum,
        )

    def accelerator(self, sku: str) -> dict[str, Any] | None:
        return self.data["accelerators"].get(sku.upper())

    def summary(self, by: str) -> list[SummaryRow]:
        return [SummaryRow(**row) for row in self.data["held_out"][by]]

    def overall(self) -> SummaryRow:
        return self.summary("model")[-1]
