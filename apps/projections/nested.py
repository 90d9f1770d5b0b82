"""Nested leave-one-accelerator-out: every choice and every band made without the
held-out accelerator, so its error and its band's coverage are honest out-of-sample figures.

Pure. For each held-out accelerator S, on the other accelerators only:
1. each candidate (fallback order x whether a model's anchor is carried) is scored by an
   inner leave-one-accelerator-out (median abs. % error, unreached = infinitely wrong);
2. the best candidate's inner held-out errors give the conformal bands (apps/projections/
   conformal.py), per matching (interactivity, concurrency); the band for points where the
   projection extrapolates (stratum "extrapolated") comes from a second inner pass that
   leaves each calibration accelerator's whole family out, so that its errors are
   extrapolations too (the inner leave-one-accelerator-out has few: a family of one);
then S is projected with that candidate and judged against those bands. S's points enter
no fit, no choice and no band of their own fold (tests/apps/projections/test_nested.py).
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from apps.projections import conformal
from apps.projections.model import FALLBACK_ORDERS, Observation, calibrate
from apps.projections.validation import Fit, HeldOutPoint, leave_one_accelerator_out

MATCHINGS = ("interactivity", "concurrency")


@dataclass(frozen=True)
class Candidate:
    order: str
    anchored: bool

    @property
    def label(self) -> str:
        return f"{self.order}{' +anchor' if self.anchored else ''}"


CANDIDATES = tuple(Candidate(o, a) for o in FALLBACK_ORDERS for a in (False, True))


def _projected(p: HeldOutPoint, matching: str) -> float | None:
    return p.projected if matching == "interactivity" else p.projected_at_concurrency


def band_score(p: HeldOutPoint, matching: str) -> float:
    """The conformal score. Along the curve ("interactivity"): the point's distance to the
    projected curve, both axes at once (a point the curve does not reach is scored, not
    infinite); at the measured concurrency: |ln measured / projected| throughput."""
    if matching == "interactivity":
        return p.curve_distance
    return conformal.score(p.measured, p.projected_at_concurrency)


def inner_score(points: Sequence[HeldOutPoint]) -> float:
    """Median abs. % error at matched interactivity; unreached counts as infinitely wrong."""
    errors = [p.abs_pct_error if p.abs_pct_error is not None else np.inf for p in points]
    return float(np.median(errors)) if errors else np.inf


@dataclass(frozen=True)
class NestedPoint:
    point: HeldOutPoint
    candidate: str
    bands: dict[str, conformal.Band]  # by matching, for this point's stratum

    def ratio(self, matching: str) -> float | None:
        projected = _projected(self.point, matching)
        return self.point.measured / projected if projected else None

    def abs_pct_error(self, matching: str) -> float | None:
        projected = _projected(self.point, matching)
        return abs(projected / self.point.measured - 1) * 100 if projected else None

    def covered(self, matching: str) -> bool:
        return band_score(self.point, matching) <= self.bands[matching].q


@dataclass(frozen=True)
class Fold:
    sku: str
    scores: dict[str, float]  # inner median per candidate label
    picked: str
    bands: dict[str, dict[str, conformal.Band]]  # matching -> stratum -> band
    points: list[NestedPoint]
    inner: list[HeldOutPoint]  # the picked candidate's inner held-out points (the bands')
    outside: list[HeldOutPoint]  # the same, each with its whole family left out


def nested_leave_one_accelerator_out(
    observations: Sequence[Observation],
    *,
    candidates: Sequence[Candidate] = CANDIDATES,
    coverage: float = conformal.COVERAGE,
    fit: Fit = calibrate,
    on_fold: Callable[[str], None] | None = None,
) -> list[Fold]:
    """`on_fold(sku)` is called as each outer fold starts (tests check every fit it makes)."""
    folds = []
    for sku in sorted({o.accel.sku for o in observations}):
        if on_fold:
            on_fold(sku)
        train = [o for o in observations if o.accel.sku != sku]
        inner = {
            c.label: leave_one_accelerator_out(train, order=c.order, anchored=c.anchored, fit=fit)
            for c in candidates
        }
        scores = {label: inner_score(points) for label, points in inner.items()}
        best = min(candidates, key=lambda c: scores[c.label])  # ties: the first listed
        # An extrapolation's errors, made the same way: each calibration accelerator
        # projected with its whole family left out, so none of them is "seen".
        outside = leave_one_accelerator_out(
            train, order=best.order, anchored=best.anchored, fit=fit, without_family=True
        )
        bands = {
            m: conformal.clustered_bands(
                [(p.sku, p.stratum, band_score(p, m)) for p in inner[best.label]],
                coverage=coverage,
                extrapolated=[(p.sku, band_score(p, m)) for p in outside],
            )
            for m in MATCHINGS
        }
        held = leave_one_accelerator_out(
            observations, order=best.order, anchored=best.anchored, only=[sku], fit=fit
        )
        points = [
            NestedPoint(p, best.label, {m: bands[m][p.stratum] for m in MATCHINGS}) for p in held
        ]
        folds.append(Fold(sku, scores, best.label, bands, points, inner[best.label], outside))
    return folds


@dataclass(frozen=True)
class NestedRow:
    group: str
    points: int
    unreached: int
    median_ape: dict[str, float | None]  # by matching
    covered: dict[str, float]  # share inside the band, by matching


def nested_table(folds: Sequence[Fold], *, by: str) -> list[NestedRow]:
    """Per `by` (a HeldOutPoint field: model, engine, sku, precision, scenario, stratum),
    then all."""
    points = [p for f in folds for p in f.points]
    groups = sorted({getattr(p.point, by) for p in points})

    def row(group: str, chosen: list[NestedPoint]) -> NestedRow:
        medians: dict[str, float | None] = {}
        for m in MATCHINGS:
            errors = [e for e in (p.abs_pct_error(m) for p in chosen) if e is not None]
            medians[m] = float(np.median(errors)) if errors else None
        return NestedRow(
            group=group,
            points=len(chosen),
            unreached=sum(p.point.projected is None for p in chosen),
            median_ape=medians,
            covered={m: sum(p.covered(m) for p in chosen) / len(chosen) for m in MATCHINGS},
        )

    rows = [row(g, [p for p in points if getattr(p.point, by) == g]) for g in groups]
    rows.append(row("all", points))
    return rows
