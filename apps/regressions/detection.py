"""Change points in one series: pure functions over plain numbers (no Django, no I/O).

The method: PELT (Killick, Fearnhead & Eckley 2012, "Optimal detection of changepoints with
a linear computational cost") on the series' logarithm with a least-squares cost and BIC's
penalty, as `ruptures` implements it; then each candidate is kept only while a t-test of
the levels on its two sides (means robust to a stray point) against the series' own noise
is significant and the shift is at least MIN_RELATIVE_CHANGE; the weakest failing
candidate is dropped and its neighbours judged again until every one left passes.

Why ruptures: it is maintained, published (Truong, Oudre & Vayatis 2020) and needs only
numpy and scipy, which a server install can carry. `apache-otava` 0.8 pins `numpy==2.2.*`
(the worker's numpy is not pinned) and brings BigQuery, Slack and pg8000 clients the server
does not use; MongoDB's `signal-processing-algorithms` (E-divisive means) is lighter than
otava but would be a second, less used, change-point library for one call. The test
below is ours because ruptures gives locations, not sizes or significance.

Why the logarithm: throughput and latency change by ratios (a 10% drop matters the same at
100 and at 1,000 tok/s), so a shift of the log is a relative size with a symmetric interval.
A success rate is already a fraction and is taken as it is.

The noise is first estimated from successive differences (median absolute difference,
scaled to a standard deviation: a shift moves one difference and leaves the median alone),
which sets PELT's penalty; then from the residuals around the levels PELT found. A floor
keeps a perfectly flat series (success 100% every time) from making a 0.1% wobble
"significant".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import ruptures
from scipy.stats import t as student_t

# Two-sided significance a change point must reach, and the least relative size it must
# have: a real but 0.5% change is not one an engineer should be told about.
ALPHA = 0.001
MIN_RELATIVE_CHANGE = 0.01
# Points each side: one point is an outlier, not a level.
MIN_SIZE = 2
# PELT's penalty per change point: BIC's 2·σ²·log(n) for a least-squares cost.
# A side whose median deviation exceeds this many noise levels is not one level.
RAGGED_SIGMAS = 3.0
# Points further than this many noise levels from their segment's median count as this far.
CLIP_SIGMAS = 2.5
# The noise floor, in the working scale (log units ~ a fraction of the level).
NOISE_FLOOR = 0.005


@dataclass(frozen=True)
class Change:
    """A shift between points [start, index) and [index, end) of the series given."""

    index: int  # the first point after the change
    start: int  # first point of the segment before
    end: int  # one past the last point of the segment after
    before: float  # the level before (_level), in the series' own unit
    after: float
    relative: float  # after / before - 1 (for a fraction: after - before)
    low: float  # 95% interval of `relative`
    high: float
    p_value: float
    noise: float  # the noise estimate the test used, in the working scale


def noise_sigma(x: np.ndarray) -> float:
    if len(x) < 3:
        return NOISE_FLOOR
    diffs = np.abs(np.diff(x))
    return max(float(np.median(diffs)) * 1.4826 / math.sqrt(2), NOISE_FLOOR)


def segment_noise(x: np.ndarray, breaks: list[int], first: float) -> float:
    """The noise around the levels PELT found (median absolute residual from each segment's
    median, as a standard deviation): nearly twice as efficient as successive differences,
    which served to find those levels. Never below the floor."""
    bounds = [0, *breaks, len(x)]
    residuals = np.concatenate(
        [x[a:b] - np.median(x[a:b]) for a, b in zip(bounds, bounds[1:], strict=False)]
    )
    # Two-point segments have residuals that are exactly half their gap: they say little.
    if len(residuals) < 6:
        return first
    return max(float(np.median(np.abs(residuals))) * 1.4826, NOISE_FLOOR)


def _spread(segment: np.ndarray) -> float:
    return float(np.median(np.abs(segment - np.median(segment))))


def _level(segment: np.ndarray, sigma: float) -> float:
    """A segment's level: the mean after clipping each point to CLIP_SIGMAS noise levels
    around the segment's median (a one-step Huber estimate): as efficient as the mean on
    normal noise, while one stray point cannot move it far."""
    middle = float(np.median(segment))
    reach = CLIP_SIGMAS * sigma
    return float(np.clip(segment, middle - reach, middle + reach).mean())


def _se(sigma: float, n_a: int, n_b: int) -> float:
    return sigma * math.sqrt(1 / n_a + 1 / n_b)


def _judge(
    x: np.ndarray, start: int, index: int, end: int, sigma: float, dof: int
) -> tuple[float, float]:
    """The shift between the two sides' levels, and its two-sided p-value against the
    series' noise: Student's t with the noise estimate's degrees of freedom (points less
    levels), so a short series, whose noise is known less well, needs a larger shift."""
    delta = _level(x[index:end], sigma) - _level(x[start:index], sigma)
    p = 2 * float(student_t.sf(abs(delta) / _se(sigma, index - start, end - index), dof))
    return delta, p


def _prune(x: np.ndarray, breaks: list[int], sigma: float, *, log_scale: bool) -> None:
    """Drop from `breaks`, weakest first, every break that fails its test, judging again
    after each drop."""
    while True:
        bounds = [0, *breaks, len(x)]
        judged = []
        for k, index in enumerate(breaks):
            delta, p = _judge(x, bounds[k], index, bounds[k + 2], sigma, len(x) - len(bounds) + 1)
            size = math.expm1(abs(delta)) if log_scale else abs(delta)
            # A side whose own points disagree by far more than the noise is not a level:
            # one outlier paired with a normal point (min_size 2) looks like a shift.
            ragged = max(_spread(x[bounds[k] : index]), _spread(x[index : bounds[k + 2]]))
            failing = p > ALPHA or size < MIN_RELATIVE_CHANGE or ragged > RAGGED_SIGMAS * sigma
            judged.append((failing, p, index, delta))
        weakest = max((j for j in judged if j[0]), default=None, key=lambda j: j[1])
        if weakest is None:
            return
        breaks.remove(weakest[2])


def find_changes(values: list[float], *, log_scale: bool = True) -> list[Change]:
    """The change points of a series in time order (positive values if `log_scale`)."""
    raw = np.asarray(values, dtype=float)
    if len(raw) < 2 * MIN_SIZE or not np.all(np.isfinite(raw)):
        return []
    if log_scale:
        if np.any(raw <= 0):
            return []
        x = np.log(raw)
    else:
        x = raw
    sigma = noise_sigma(x)
    algo = ruptures.Pelt(model="l2", min_size=MIN_SIZE, jump=1).fit(x.reshape(-1, 1))
    penalty = 2 * sigma**2 * math.log(len(x))
    breaks = [b for b in algo.predict(pen=penalty) if b < len(x)]
    sigma = segment_noise(x, breaks, sigma)
    _prune(x, breaks, sigma, log_scale=log_scale)
    changes = []
    bounds = [0, *breaks, len(x)]
    for k, index in enumerate(breaks):
        start, end = bounds[k], bounds[k + 2]
        dof = len(x) - len(bounds) + 1
        delta, p = _judge(x, start, index, end, sigma, dof)
        margin = float(student_t.ppf(0.975, dof)) * _se(sigma, index - start, end - index)
        before, after = _level(x[start:index], sigma), _level(x[index:end], sigma)
        if log_scale:
            level_before, level_after = math.exp(before), math.exp(after)
            relative, low, high = (
                math.expm1(delta),
                math.expm1(delta - margin),
                math.expm1(delta + margin),
            )
        else:
            level_before, level_after = before, after
            relative, low, high = delta, delta - margin, delta + margin
        changes.append(
            Change(
                index=index,
                start=start,
                end=end,
                before=level_before,
                after=level_after,
                relative=relative,
                low=low,
                high=high,
                p_value=p,
                noise=sigma,
            )
        )
    return changes


def persists(values: list[float], change: Change, *, needed: int, window: int) -> bool:
    """Whether at least `needed` of the series' last `window` points lie after the change
    and on its far side of the midpoint between the two levels (the alert rule: a change
    that one later point undid is not told)."""
    mid = (change.before + change.after) / 2
    rising = change.after > change.before
    recent = range(max(len(values) - window, 0), len(values))
    held = sum(
        1
        for i in recent
        if i >= change.index and ((values[i] > mid) if rising else (values[i] < mid))
    )
    return held >= needed
