"""Point models: a projection's TPOT, TTFT and throughput per GPU for a setup at any
concurrency, fitted on measured accelerators. Pure.

A candidate point model has up to three parts; apps/projections/nested.py picks one by
nested leave-one-accelerator-out, never by hand:

1. its roofline terms (apps/projections/features.py);
2. efficiencies: TPOT = sum of the decode terms, each times an inverse efficiency, and TTFT
   likewise from the prefill terms, fitted by non-negative least squares on relative errors
   for one engine on one accelerator family; a group with fewer than MIN_POINTS_PER_FIT
   points borrows from the next group of the candidate's fallback order (FALLBACK_ORDERS).
   Throughput per GPU is the closed loop's, times a fitted factor for the benchmark's spread
   of request lengths. "+anchor": TPOT times the geometric mean of measured / modelled TPOT
   of the same model on the calibration's accelerators (issue 44's anchor);
3. transfer (optional): what the fitted roofline misses on measured runs (log residuals of
   TPOT, TTFT and the throughput factor; throughput then follows from the closed loop) is
   carried to the setup projected by a kernel-weighted mean of the residuals of the runs
   most like it: same family, else vendor, else any accelerator; the same engine,
   precision, layout, shape and model; close in date (the engine's version) and in
   concurrency; shrunk toward no correction where few runs are alike (Nadaraya-Watson with
   a prior weight, `Transfer.shrink`). On a sibling accelerator run the same week with the same
   configuration this is the sibling's measured curve scaled by the roofline's ratio of the
   two datasheets; with no such run it fades to the roofline alone.
"""

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date as calendar_date
from functools import cached_property

import numpy as np

from apps.projections import features
from apps.projections.model import Accelerator, Observation, Setup, closed_loop_tput

MIN_POINTS_PER_FIT = 8
# The projected curve is sampled at these concurrencies (about 6% apart).
GRID = np.geomspace(1, 16384, 161)

# Where a group's efficiencies come from when it has too few points, narrowest first. A
# group's second element matches an accelerator's family or its vendor.
FALLBACK_ORDERS: dict[str, Callable[[str, Accelerator], list[tuple[str, str]]]] = {
    "family-first": lambda e, a: [(e, a.family), ("*", a.family), (e, "*"), ("*", "*")],
    "family-then-vendor": lambda e, a: [
        (e, a.family), ("*", a.family), (e, a.vendor), ("*", a.vendor), (e, "*"), ("*", "*")
    ],
    "engine-wide": lambda e, a: [(e, "*"), ("*", "*")],
}  # fmt: skip


def nnls(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Least squares with every coefficient >= 0 (an efficiency cannot be negative).

    Written here rather than adding scipy for one call: the active-set loop of Lawson and
    Hanson, small enough for a handful of columns."""
    active = list(range(a.shape[1]))
    x = np.zeros(a.shape[1])
    while active:
        sol, *_ = np.linalg.lstsq(a[:, active], b, rcond=None)
        if (sol >= 0).all():
            x[:] = 0
            x[active] = sol
            return x
        active.pop(int(np.argmin(sol)))
    return x


@dataclass(frozen=True)
class Efficiency:
    """Inverse efficiencies fitted for one engine on one accelerator family (or wider)."""

    key: tuple[str, str]
    decode: tuple[float, ...]
    prefill: tuple[float, ...]
    throughput_factor: float
    points: int
    fallback: bool = False  # fitted on a wider group than the one asked for


def fit_efficiency(
    observations: Sequence[Observation], key: tuple[str, str], terms: str
) -> Efficiency:
    """Relative-error least squares: each row is divided by its measured value."""
    if not observations:
        raise ValueError(f"no observations to calibrate {key}")
    # all queued (no group the fallback picks is): use them all rather than fit nothing
    skip_queued = not all(o.ttft_queued for o in observations)
    decode_rows, prefill_rows = features.observation_matrices(observations, terms)
    tpot = np.array([o.tpot_s for o in observations])
    timed = np.array([not (o.ttft_queued and skip_queued) for o in observations])
    ttft = np.array([o.ttft_s for o in observations])[timed]
    ratios = [
        math.log(
            o.tput_per_gpu / closed_loop_tput(o.concurrency, o.shape, o.layout, o.ttft_s, o.tpot_s)
        )
        for o, keep in zip(observations, timed, strict=True)
        if keep
    ]
    decode = nnls(decode_rows / tpot[:, None], np.ones(len(tpot)))
    prefill = nnls(prefill_rows[timed] / ttft[:, None], np.ones(len(ttft)))
    return Efficiency(
        key=key,
        decode=tuple(float(v) for v in decode),
        prefill=tuple(float(v) for v in prefill),
        throughput_factor=math.exp(float(np.mean(ratios))),
        points=len(observations),
    )


@dataclass(frozen=True)
class Transfer:
    """How alike two runs must be for one's residual to stand for the other's: a weight per
    difference (1 = no discount), and widths in days and in log concurrency."""

    vendor: float  # another family of the same vendor
    other_vendor: float
    engine: float
    precision: float
    layout: float
    shape: float
    model: float
    days: float
    log_concurrency: float
    shrink: float  # prior weight of "no correction"


@dataclass(frozen=True)
class Curve:
    """A projected curve: the setup at each concurrency."""

    concurrency: np.ndarray
    tpot_s: np.ndarray
    ttft_s: np.ndarray
    tput_per_gpu: np.ndarray  # total (input + output)

    @property
    def interactivity(self) -> np.ndarray:
        return 1 / self.tpot_s

    def tput_at_interactivity(self, value: float) -> float | None:
        """Throughput where the curve first falls to `value` tok/s/user (interactivity
        falls as concurrency grows), interpolated in log space; None when the curve never
        gets that fast (faster than one stream); the last point when it never gets as slow."""
        inter = self.interactivity
        if inter[0] < value:
            return None
        below = np.nonzero(inter < value)[0]
        if not len(below):
            return float(self.tput_per_gpu[-1])
        k = int(below[0])
        x0, x1 = math.log(inter[k - 1]), math.log(inter[k])
        y0, y1 = math.log(self.tput_per_gpu[k - 1]), math.log(self.tput_per_gpu[k])
        t = (math.log(value) - x0) / (x1 - x0)
        return math.exp(y0 + t * (y1 - y0))

    def distance(self, interactivity: float, tput: float) -> float:
        """How far the curve must be widened, along both axes at once, to hold the point:
        the smallest over the curve (the polyline through its points in log space) of the
        larger axis' |log ratio| (Chebyshev distance in log space)."""
        xy = np.log(np.column_stack([self.interactivity, self.tput_per_gpu]))
        start = xy[:-1] - np.log([interactivity, tput])
        step = xy[1:] - xy[:-1]
        (x0, y0), (dx, dy) = start.T, step.T
        # max(|x0 + t dx|, |y0 + t dy|) is convex in t: its least on [0, 1] is at an end,
        # where one term is zero, or where the two are equal
        with np.errstate(divide="ignore", invalid="ignore"):
            candidates = [
                np.zeros_like(x0),
                np.ones_like(x0),
                -x0 / dx,
                -y0 / dy,
                (y0 - x0) / (dx - dy),
                -(y0 + x0) / (dx + dy),
            ]
        best = math.inf
        for t in candidates:
            t = np.clip(np.nan_to_num(t, nan=0.0, posinf=0.0, neginf=0.0), 0, 1)
            gap = np.maximum(np.abs(x0 + t * dx), np.abs(y0 + t * dy))
            best = min(best, float(gap.min()))
        return best


# What the transfer tells runs apart by (a setup's, or an observation's through its setup).
_ALIKE: dict[str, Callable[[Setup | Observation], str]] = {
    "family": lambda s: s.accel.family,
    "vendor": lambda s: s.accel.vendor,
    "engine": lambda s: s.engine,
    "precision": lambda s: s.precision_name,
    "layout": lambda s: repr(s.layout),
    "shape": lambda s: repr(s.shape),
    "model": lambda s: s.arch.name,
}


def day_number(iso: str) -> int:
    return calendar_date.fromisoformat(iso).toordinal()


@dataclass(frozen=True)
class Candidate:
    """One point model the nested evaluation can pick."""

    label: str
    terms: str = "per-phase"
    order: str = "family-first"
    anchored: bool = False
    transfer: Transfer | None = None

    def fit(self, train: Sequence[Observation]) -> "Fitted":
        return Fitted(self, list(train))


# Transfer widths: a sibling family counts fully, another family of the same vendor as
# 1/50 of a run, another vendor as 1/500; a different engine, precision, layout or shape
# discounts a run 20, 10, 10 and 5 times; a fortnight's distance in date or a factor of
# 1.5 in concurrency discounts it e times. "month": the same with a month's width and a
# stronger prior toward no correction. "week": a week's width and a factor of 1.22 in
# concurrency, for engines whose speed on one configuration moves by half within months
# (sglang's DeepSeek-R1 FP8 1k/1k TPOT at c=4 on MI325X: 21.7 ms in December 2025, 27.3 in
# January, 14.2 in May 2026) and whose curve bends sharply at small batches.
NEAR = Transfer(
    vendor=0.02, other_vendor=0.002, engine=0.05, precision=0.1, layout=0.1, shape=0.2,
    model=0.2, days=15, log_concurrency=0.4, shrink=0.1,
)  # fmt: skip
MONTH = Transfer(**{**NEAR.__dict__, "days": 30, "shrink": 0.3})
WEEK = Transfer(**{**NEAR.__dict__, "days": 7, "log_concurrency": 0.2})

COLLECTIVES = "per-phase +collectives"
CANDIDATES: tuple[Candidate, ...] = (
    Candidate("issue-44 roofline", terms="issue-44"),
    Candidate("per-phase roofline"),
    Candidate("per-phase roofline + transfer", transfer=NEAR),
    Candidate("per-phase roofline + transfer (month)", transfer=MONTH),
    Candidate("per-phase +collectives + transfer", terms=COLLECTIVES, transfer=NEAR),
    Candidate("per-phase roofline + transfer (week)", transfer=WEEK),
)
BASELINE = CANDIDATES[0]


class Fitted:
    """A candidate fitted on a calibration set: projects any setup at any concurrency."""

    def __init__(self, candidate: Candidate, train: list[Observation]) -> None:
        if not train:
            raise ValueError("no observations to calibrate on")
        self.candidate = candidate
        self.train = train
        self._groups: dict[tuple[str, str], Efficiency | None] = {}

    def efficiency(self, setup: Setup) -> Efficiency:
        """The narrowest group of the fallback order with enough points."""
        keys = FALLBACK_ORDERS[self.candidate.order](setup.engine, setup.accel)
        for i, key in enumerate(keys):
            if key not in self._groups:
                chosen = [
                    o
                    for o in self.train
                    if key[0] in ("*", o.engine) and key[1] in ("*", o.accel.family, o.accel.vendor)
                ]
                enough = len(chosen) >= MIN_POINTS_PER_FIT
                fitted = fit_efficiency(chosen, key, self.candidate.terms) if enough else None
                self._groups[key] = fitted
            found = self._groups[key]
            if found is not None:
                return Efficiency(**{**found.__dict__, "fallback": i > 0})
        raise ValueError(
            f"fewer than {MIN_POINTS_PER_FIT} observations to calibrate {setup.engine}"
        )

    def roofline(
        self, setup: Setup, batch: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """TPOT, TTFT and throughput per GPU from the fitted efficiencies alone."""
        eff = self.efficiency(setup)
        tpot = features.decode_matrix(setup, batch, self.candidate.terms) @ np.array(eff.decode)
        tpot = tpot * self.anchors.get(setup.arch.name, 1.0)
        ttft = features.prefill_matrix(setup, batch) @ np.array(eff.prefill)
        tput = np.asarray(closed_loop_tput(batch, setup.shape, setup.layout, ttft, tpot))
        return tpot, ttft, eff.throughput_factor * tput

    @cached_property
    def anchors(self) -> dict[str, float]:
        """Per model, measured / modelled TPOT on the calibration (geometric mean)."""
        if not self.candidate.anchored:
            return {}
        decode, _ = features.observation_matrices(self.train, self.candidate.terms)
        logs: dict[str, list[float]] = {}
        for obs, row in zip(self.train, decode, strict=True):
            modelled = float(row @ np.array(self.efficiency(obs.setup).decode))
            logs.setdefault(obs.arch.name, []).append(math.log(obs.tpot_s / modelled))
        return {model: math.exp(float(np.mean(v))) for model, v in logs.items()}

    @cached_property
    def _residuals(self) -> dict[str, np.ndarray]:
        """The calibration runs as the transfer reads them: what tells them apart, and
        their log residuals against the fitted roofline: of TPOT, of TTFT (a queued run's
        TTFT is waiting, not prefill: none), and of the throughput factor (measured
        throughput over the closed loop of its own measured TPOT and TTFT: the spread of
        the benchmark's request lengths, not the roofline's miss)."""
        train = self.train
        decode, prefill = features.observation_matrices(train, self.candidate.terms)
        rows = []
        for obs, dec, pre in zip(train, decode, prefill, strict=True):
            eff = self.efficiency(obs.setup)
            tpot = float(dec @ np.array(eff.decode)) * self.anchors.get(obs.arch.name, 1.0)
            ttft = float(pre @ np.array(eff.prefill))
            late = math.nan if obs.ttft_queued else math.log(obs.ttft_s / ttft)
            loop = closed_loop_tput(obs.concurrency, obs.shape, obs.layout, obs.ttft_s, obs.tpot_s)
            spread = math.log(obs.tput_per_gpu / (eff.throughput_factor * loop))
            rows.append((math.log(obs.tpot_s / tpot), late, spread))
        return {
            "residuals": np.array(rows).T,
            **{name: np.array([value(o) for o in train]) for name, value in _ALIKE.items()},
            "day": np.array([day_number(o.date) if o.date else 0 for o in train], dtype=float),
            "log_concurrency": np.log([o.concurrency for o in train]),
        }

    def transfer_weights(self, setup: Setup, date: str) -> np.ndarray:
        """Each calibration run's weight for `setup` run on `date`, before concurrency."""
        t, runs = self.candidate.transfer, self._residuals
        assert t is not None
        mine = {name: value(setup) for name, value in _ALIKE.items()}
        same_vendor = np.where(runs["vendor"] == mine["vendor"], t.vendor, t.other_vendor)
        weight = np.where(runs["family"] == mine["family"], 1.0, same_vendor)
        for name in ("engine", "precision", "layout", "shape", "model"):
            weight = weight * np.where(runs[name] == mine[name], 1.0, getattr(t, name))
        if date:
            weight = weight * np.exp(-np.abs(runs["day"] - day_number(date)) / t.days)
        return weight

    def curve(self, setup: Setup, date: str = "", concurrencies: np.ndarray = GRID) -> Curve:
        """The projection of `setup` (as its engine ran on `date`) at each concurrency."""
        batch = np.asarray(concurrencies, dtype=float)
        tpot, ttft, _ = self.roofline(setup, batch)
        factor = self.efficiency(setup).throughput_factor * np.ones_like(batch)
        t = self.candidate.transfer
        if t is not None:
            runs = self._residuals
            gap = np.log(batch)[:, None] - runs["log_concurrency"][None, :]
            weights = np.exp(-(gap**2) / (2 * t.log_concurrency**2))
            weights *= self.transfer_weights(setup, date)[None, :]
            corrections = []
            for residual in runs["residuals"]:  # TPOT, TTFT, spread: each where measured
                known = ~np.isnan(residual)
                w = weights[:, known]
                corrections.append(np.exp(w @ residual[known] / (w.sum(axis=1) + t.shrink)))
            tpot, ttft, factor = (
                tpot * corrections[0],
                ttft * corrections[1],
                factor * corrections[2],
            )
        tput = factor * np.asarray(closed_loop_tput(batch, setup.shape, setup.layout, ttft, tpot))
        return Curve(batch, tpot, ttft, tput)
