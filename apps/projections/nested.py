"""Nested leave-one-accelerator-out: every choice and every band made without the
held-out accelerator, so its error and its band's coverage are honest out-of-sample figures.

Pure. `select` is the whole procedure on a calibration set: each candidate point model
(apps/projections/pointmodels.py CANDIDATES) is scored by a leave-one-accelerator-out
inside the set (`inner_score`); the best one's held-out errors make the 80% bands
(apps/projections/conformal.py stratum_bands), per matching (interactivity,
concurrency) and stratum: "seen" from the inner held-out points whose like was seen,
"extrapolated" from those that extrapolate (or, where too few accelerators do, with a
second inner pass that leaves each accelerator's whole family out), each read at the
quantile level the same rule needed one level down to hold its promise (`_trials`,
conformal.calibrated_levels). Then:

- `nested_leave_one_accelerator_out`: for each accelerator S, `select` on the others, then S
  projected by the picked candidate fitted on the others and judged against those bands.
  S's points enter no fit, no choice and no band of their own fold
  (tests/apps/projections/test_nested.py);
- `final_selection`: `select` on every accelerator: the model and bands pages use;
- `cross_vendor`: `select` on one vendor's accelerators only, then the other vendor's
  projected and judged the same way.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from apps.projections import conformal
from apps.projections.model import Observation
from apps.projections.pointmodels import CANDIDATES, Candidate
from apps.projections.validation import (
    Fit,
    HeldOutPoint,
    fit_candidate,
    leave_one_accelerator_out,
    pct_error,
    project_held_out,
)

MATCHINGS = ("interactivity", "concurrency")
# A point the projection does not reach, or misses by more than this (%), counts as this
# much in the choice of a model (one unreached accelerator must not win or lose alone).
SCORE_CAP_PCT = 100.0


def _projected(p: HeldOutPoint, matching: str) -> float | None:
    return p.projected if matching == "interactivity" else p.projected_at_concurrency


def abs_pct_error(p: HeldOutPoint, matching: str) -> float | None:
    projected = _projected(p, matching)
    return pct_error(projected, p.measured) if projected else None


def band_score(p: HeldOutPoint, matching: str) -> float:
    """The conformal score. Along the curve ("interactivity"): the point's distance to the
    projected curve, both axes at once (a point the curve does not reach is scored, not
    infinite); at the measured concurrency: |ln measured / projected| throughput."""
    if matching == "interactivity":
        return p.curve_distance
    return conformal.score(p.measured, p.projected_at_concurrency)


def inner_score(points: Sequence[HeldOutPoint]) -> float:
    """How a candidate did inside a calibration set: per held-out accelerator, the median
    abs. % error at each matching (unreached and worse than SCORE_CAP_PCT count as the cap),
    averaged over the two matchings and then over accelerators, each weighing the same (a
    new accelerator is what a projection is for, not a new point of a measured one)."""
    per_sku = []
    for sku in sorted({p.sku for p in points}):
        mine = [p for p in points if p.sku == sku]
        medians = []
        for m in MATCHINGS:
            errors = [abs_pct_error(p, m) for p in mine]
            capped = [SCORE_CAP_PCT if e is None else min(e, SCORE_CAP_PCT) for e in errors]
            medians.append(float(np.median(capped)))
        per_sku.append(float(np.mean(medians)))
    return float(np.mean(per_sku)) if per_sku else np.inf


@dataclass(frozen=True)
class Selection:
    """The procedure's outcome on one calibration set."""

    scores: dict[str, float]  # inner score per candidate label
    picked: Candidate
    bands: dict[str, dict[str, conformal.Band]]  # matching -> stratum -> band
    inner: list[HeldOutPoint]  # the picked candidate's inner held-out points
    outside: list[HeldOutPoint]  # the same, each with its whole family left out


def select(
    train: Sequence[Observation],
    *,
    candidates: Sequence[Candidate] = CANDIDATES,
    coverage: float = conformal.COVERAGE,
    fit: Fit = fit_candidate,
) -> Selection:
    """Pick a candidate and make its bands from `train` alone (ties: the first listed)."""
    inner = {c.label: leave_one_accelerator_out(train, c, fit=fit) for c in candidates}
    scores = {label: inner_score(points) for label, points in inner.items()}
    best = min(candidates, key=lambda c: scores[c.label])
    outside = leave_one_accelerator_out(train, best, fit=fit, without_family=True)
    trials = _trials(train, best, inner[best.label], fit=fit)
    bands = {}
    for m in MATCHINGS:
        levels = conformal.calibrated_levels(trials[m], coverage) if trials else None
        bands[m] = conformal.stratum_bands(
            [(p.sku, p.stratum, band_score(p, m)) for p in inner[best.label]],
            [(p.sku, band_score(p, m)) for p in outside],
            coverage=coverage,
            levels=levels,
        )
    return Selection(scores, best, bands, inner[best.label], outside)


def _trials(
    train: Sequence[Observation], best: Candidate, inner: Sequence[HeldOutPoint], *, fit: Fit
) -> dict[str, list[conformal.Trial]]:
    """Per matching, the band rule one level down (conformal.calibrated_levels): each
    accelerator of `train` left out, the picked candidate's leave-one-out errors on the
    rest, and its own points as the inner pass projected them (fitted on that rest)."""
    trials: dict[str, list[conformal.Trial]] = {m: [] for m in MATCHINGS}
    for sku in sorted({o.accel.sku for o in train}):
        rest = [o for o in train if o.accel.sku != sku]
        if len({o.accel.sku for o in rest}) < 2:
            continue
        down = leave_one_accelerator_out(rest, best, fit=fit)
        family_out = leave_one_accelerator_out(rest, best, fit=fit, without_family=True)
        held = [p for p in inner if p.sku == sku]
        for m in MATCHINGS:
            trials[m].append(
                conformal.Trial(
                    inner=[(p.sku, p.stratum, band_score(p, m)) for p in down],
                    outside=[(p.sku, band_score(p, m)) for p in family_out],
                    held=[(p.stratum, band_score(p, m)) for p in held],
                )
            )
    return trials


@dataclass(frozen=True)
class NestedPoint:
    point: HeldOutPoint
    candidate: str
    bands: dict[str, conformal.Band]  # by matching, for this point's stratum

    def abs_pct_error(self, matching: str) -> float | None:
        return abs_pct_error(self.point, matching)

    def covered(self, matching: str) -> bool:
        return band_score(self.point, matching) <= self.bands[matching].q


@dataclass(frozen=True)
class Fold:
    sku: str  # the accelerator held out, or "NVIDIA -> AMD" for a cross-vendor fold
    selection: Selection
    points: list[NestedPoint]

    @property
    def picked(self) -> str:
        return self.selection.picked.label

    @property
    def bands(self) -> dict[str, dict[str, conformal.Band]]:
        return self.selection.bands


def judged(
    held: Sequence[Observation],
    train: Sequence[Observation],
    *,
    candidates: Sequence[Candidate],
    coverage: float,
    fit: Fit,
) -> tuple[Selection, list[NestedPoint]]:
    """`held` projected by the candidate `select` picks on `train`, fitted on `train`, and
    judged against the bands `select` made for each point's stratum."""
    chosen = select(train, candidates=candidates, coverage=coverage, fit=fit)
    points = project_held_out(fit(chosen.picked, train), held, train)
    label = chosen.picked.label
    return chosen, [
        NestedPoint(p, label, {m: chosen.bands[m][p.stratum] for m in MATCHINGS}) for p in points
    ]


def nested_leave_one_accelerator_out(
    observations: Sequence[Observation],
    *,
    candidates: Sequence[Candidate] = CANDIDATES,
    coverage: float = conformal.COVERAGE,
    fit: Fit = fit_candidate,
    on_fold: Callable[[str], None] | None = None,
) -> list[Fold]:
    """`on_fold(sku)` is called as each outer fold starts (tests check every fit it makes)."""
    folds = []
    for sku in sorted({o.accel.sku for o in observations}):
        if on_fold:
            on_fold(sku)
        held = [o for o in observations if o.accel.sku == sku]
        train = [o for o in observations if o.accel.sku != sku]
        chosen, points = judged(held, train, candidates=candidates, coverage=coverage, fit=fit)
        folds.append(Fold(sku, chosen, points))
    return folds


def final_selection(
    observations: Sequence[Observation],
    *,
    candidates: Sequence[Candidate] = CANDIDATES,
    coverage: float = conformal.COVERAGE,
) -> Selection:
    """The procedure on every accelerator: the point model and bands pages use."""
    return select(observations, candidates=candidates, coverage=coverage)


def cross_vendor(
    observations: Sequence[Observation],
    *,
    candidates: Sequence[Candidate] = CANDIDATES,
    coverage: float = conformal.COVERAGE,
    fit: Fit = fit_candidate,
) -> list[Fold]:
    """For each vendor V: the procedure on the other vendors' accelerators only, then V's
    accelerators projected and judged (every point an extrapolation to a new vendor)."""
    folds = []
    vendors = sorted({o.accel.vendor for o in observations})
    for target in vendors:
        held = [o for o in observations if o.accel.vendor == target]
        train = [o for o in observations if o.accel.vendor != target]
        if not held or len({o.accel.sku for o in train}) < 2:
            continue
        source = " + ".join(sorted({o.accel.vendor for o in train}))
        chosen, points = judged(held, train, candidates=candidates, coverage=coverage, fit=fit)
        folds.append(Fold(f"{source} -> {target}", chosen, points))
    return folds


@dataclass(frozen=True)
class Evaluation:
    """Everything the shipped calibration holds: the nested folds, the choice made on every
    accelerator, and the cross-vendor folds."""

    folds: list[Fold]
    final: Selection
    cross: list[Fold]


def evaluate(
    observations: Sequence[Observation], *, candidates: Sequence[Candidate] = CANDIDATES
) -> Evaluation:
    return Evaluation(
        folds=nested_leave_one_accelerator_out(observations, candidates=candidates),
        final=final_selection(observations, candidates=candidates),
        cross=cross_vendor(observations, candidates=candidates),
    )


@dataclass(frozen=True)
class NestedRow:
    group: str
    points: int
    unreached: int
    median_ape: dict[str, float | None]  # by matching, %
    p90_ape: dict[str, float | None]  # by matching, %
    covered: dict[str, float]  # share inside the band, by matching
    width: dict[str, float]  # median hi/lo of the bands the points were judged with


def table_row(group: str, chosen: Sequence[NestedPoint]) -> NestedRow:
    medians: dict[str, float | None] = {}
    p90s: dict[str, float | None] = {}
    for m in MATCHINGS:
        errors = [e for e in (p.abs_pct_error(m) for p in chosen) if e is not None]
        medians[m] = float(np.median(errors)) if errors else None
        p90s[m] = float(np.quantile(errors, 0.9)) if errors else None
    n = max(len(chosen), 1)
    return NestedRow(
        group=group,
        points=len(chosen),
        unreached=sum(p.point.projected is None for p in chosen),
        median_ape=medians,
        p90_ape=p90s,
        covered={m: sum(p.covered(m) for p in chosen) / n for m in MATCHINGS},
        width={
            m: float(np.median([p.bands[m].width for p in chosen])) if chosen else np.inf
            for m in MATCHINGS
        },
    )


def nested_table(folds: Sequence[Fold], *, by: str) -> list[NestedRow]:
    """Per `by` (a HeldOutPoint field: model, engine, sku, vendor, precision, scenario,
    stratum), then all."""
    points = [p for f in folds for p in f.points]
    groups = sorted({getattr(p.point, by) for p in points})
    rows = [table_row(g, [p for p in points if getattr(p.point, by) == g]) for g in groups]
    rows.append(table_row("all", points))
    return rows
