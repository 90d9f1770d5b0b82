"""Statistics for accuracy: Wilson intervals, paired comparisons (McNemar, Newcombe), verdicts.

Pure functions of counts; no scipy. Differences are candidate minus baseline, as fractions
(multiply by 100 for points).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Literal

Z95 = 1.959963984540054  # two-sided 95% normal quantile
Z80_POWER = 0.8416212335729143  # one-sided 80% quantile, for the detectable difference


@dataclass(frozen=True)
class Interval:
    low: float
    high: float


def wilson(correct: int, n: int, z: float = Z95) -> Interval:
    """Wilson score interval for a proportion; [0, 1] when there is nothing to estimate."""
    if n <= 0:
        return Interval(0.0, 1.0)
    if not 0 <= correct <= n:
        raise ValueError(f"correct ({correct}) must be between 0 and n ({n})")
    return wilson_fraction(correct / n, n, z)


def wilson_fraction(p: float, n: float, z: float = Z95) -> Interval:
    """Wilson interval from a proportion and a (possibly effective, non-integer) sample size."""
    if n <= 0:
        return Interval(0.0, 1.0)
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    # At 0 or n the bound is exactly the observed value; rounding must not move it.
    low = 0.0 if p <= 0 else max(0.0, centre - half)
    high = 1.0 if p >= 1 else min(1.0, centre + half)
    return Interval(low, high)


@dataclass(frozen=True)
class ClusteredScore:
    n: int
    correct: int
    stderr: float
    effective_n: float
    interval: Interval


def clustered_score(clusters: list[tuple[int, int]], z: float = Z95) -> ClusteredScore:
    """Score over repeated items, e.g. GPQA's K shuffles of one question.

    clusters: (correct, scored) per question. Repeats of one question are not independent,
    so the standard error is cluster-robust (ratio estimator) and the Wilson interval uses
    the effective sample size p(1-p)/se^2, never more than the item count (Kish's design
    effect). With one item per cluster this is the plain Wilson interval.
    """
    clusters = [(c, k) for c, k in clusters if k > 0]
    n = sum(k for _, k in clusters)
    correct = sum(c for c, _ in clusters)
    if n == 0:
        return ClusteredScore(0, 0, 0.0, 0.0, Interval(0.0, 1.0))
    p = correct / n
    q = len(clusters)
    if q > 1 and any(k > 1 for _, k in clusters):
        variance = q / (q - 1) * sum((c - p * k) ** 2 for c, k in clusters) / n**2
    else:
        variance = p * (1 - p) / n
    # Never claim more precision than n independent items would give.
    variance = max(variance, p * (1 - p) / n)
    effective = n if variance <= 0 else p * (1 - p) / variance
    return ClusteredScore(
        n, correct, math.sqrt(variance), effective, wilson_fraction(p, effective, z)
    )


def mcnemar_exact_p(only_baseline: int, only_candidate: int) -> float:
    """Two-sided exact (conditional) McNemar p: binomial test of the discordant pairs at 1/2."""
    if only_baseline < 0 or only_candidate < 0:
        raise ValueError("discordant counts must be >= 0")
    discordant = only_baseline + only_candidate
    if discordant == 0:
        return 1.0
    smaller = min(only_baseline, only_candidate)
    # Exact integers: Python divides big ints with correct rounding, so no overflow for large n.
    tail = sum(math.comb(discordant, i) for i in range(smaller + 1))
    return min(1.0, 2 * tail / 2**discordant)


def newcombe_paired(both: int, only_baseline: int, only_candidate: int, neither: int,
                    z: float = Z95) -> Interval:  # fmt: skip
    """Newcombe (1998) method 10 interval for a paired difference (candidate - baseline).

    Square-and-add of the two Wilson intervals with the correlation phi corrected as in
    Newcombe's paper (and Fagerland, Lydersen & Laake's `Newcombe_square_and_add_CI_paired_2x2`).
    """
    n = both + only_baseline + only_candidate + neither
    if n <= 0:
        return Interval(-1.0, 1.0)
    # p1 is the candidate (minuend), p2 the baseline.
    x1, x2 = both + only_candidate, both + only_baseline
    p1, p2 = x1 / n, x2 / n
    w1, w2 = wilson(x1, n, z), wilson(x2, n, z)
    margins = x1 * (n - x1) * x2 * (n - x2)
    phi = 0.0
    if margins > 0:
        # Rows of the candidate's 2x2: (right, wrong) by the baseline's (right, wrong).
        a, b, c, d = both, only_candidate, only_baseline, neither
        cross = a * d - b * c
        if cross > n / 2:
            phi = (cross - n / 2) / math.sqrt(margins)
        elif cross < 0:
            phi = cross / math.sqrt(margins)
    delta = p1 - p2
    dl1, du1 = p1 - w1.low, w1.high - p1
    dl2, du2 = p2 - w2.low, w2.high - p2
    low = delta - math.sqrt(max(0.0, dl1**2 - 2 * phi * dl1 * du2 + du2**2))
    high = delta + math.sqrt(max(0.0, dl2**2 - 2 * phi * dl2 * du1 + du1**2))
    return Interval(max(-1.0, low), min(1.0, high))


def detectable_difference(discordant: int, n: int) -> float:
    """Smallest difference a paired test detects with 80% power at 5% (two-sided).

    Normal approximation for small differences: (z_0.975 + z_0.8) * sqrt(discordance / n).
    """
    if n <= 0:
        return 1.0
    return (Z95 + Z80_POWER) * math.sqrt(discordant / n) / math.sqrt(n)


VerdictKind = Literal["within", "worse", "better", "inconclusive"]


@dataclass(frozen=True)
class NoiseFloor:
    """Two runs of the same deployment on the same items: how much flips by chance."""

    n: int
    discordant: int
    flipped_ids: list[str]

    @property
    def rate(self) -> float:
        return self.discordant / self.n if self.n else 0.0

    @property
    def points(self) -> float:
        """Half-width in points of the difference that A/A flips alone produce (95%)."""
        return 100 * Z95 * math.sqrt(self.rate / self.n) if self.n else 0.0


@dataclass(frozen=True)
class PairedComparison:
    n: int
    both: int
    only_baseline: int
    only_candidate: int
    neither: int
    unpaired: int
    baseline_accuracy: float
    candidate_accuracy: float
    difference: float
    interval: Interval
    mcnemar_p: float
    detectable: float
    lost_ids: list[str] = field(default_factory=list)  # baseline right, candidate wrong
    gained_ids: list[str] = field(default_factory=list)  # baseline wrong, candidate right
    verdict: VerdictKind = "inconclusive"
    verdict_text: str = ""
    noise_floor: NoiseFloor | None = None
    design_effect: float = 1.0  # > 1 when repeats of one question flip together

    @property
    def discordant(self) -> int:
        return self.only_baseline + self.only_candidate


def pair_outcomes(
    baseline: dict[str, bool], candidate: dict[str, bool]
) -> tuple[list[str], list[str], int, int, int]:
    """Split the shared items: (lost ids, gained ids, both right, neither, unpaired count)."""
    shared = baseline.keys() & candidate.keys()
    lost, gained, both, neither = [], [], 0, 0
    for item_id in sorted(shared):
        a, b = baseline[item_id], candidate[item_id]
        if a and b:
            both += 1
        elif a:
            lost.append(item_id)
        elif b:
            gained.append(item_id)
        else:
            neither += 1
    unpaired = len(baseline.keys() ^ candidate.keys())
    return lost, gained, both, neither, unpaired


def noise_floor(first: dict[str, bool], second: dict[str, bool]) -> NoiseFloor:
    lost, gained, both, neither, _ = pair_outcomes(first, second)
    flipped = sorted(lost + gained)
    return NoiseFloor(n=both + neither + len(flipped), discordant=len(flipped), flipped_ids=flipped)


def paired_design_effect(
    baseline: dict[str, bool], candidate: dict[str, bool], cluster_of: Callable[[str], str]
) -> float:
    """How much repeats of one question inflate the variance of the paired difference.

    Cluster-robust variance of the mean difference over the variance it would have if every
    item were independent; at least 1 (we never narrow an interval on this account).
    """
    sums: dict[str, list[int]] = {}
    flips = 0
    for item_id in baseline.keys() & candidate.keys():
        d = int(candidate[item_id]) - int(baseline[item_id])
        cell = sums.setdefault(cluster_of(item_id), [0, 0])
        cell[0] += d
        cell[1] += 1
        flips += abs(d)
    n = sum(k for _, k in sums.values())
    q = len(sums)
    if q < 2 or n == q:
        return 1.0
    delta = sum(d for d, _ in sums.values()) / n
    independent = (flips / n - delta**2) / n
    clustered = q / (q - 1) * sum((d - delta * k) ** 2 for d, k in sums.values()) / n**2
    return max(1.0, clustered / independent) if independent > 0 else 1.0


def compare(
    baseline: dict[str, bool],
    candidate: dict[str, bool],
    margin_points: float,
    baseline_label: str = "baseline",
    candidate_label: str = "candidate",
    aa: NoiseFloor | None = None,
    cluster_of: Callable[[str], str] | None = None,
) -> PairedComparison:
    """Paired comparison of two runs over the items both scored (item id -> correct).

    `cluster_of` maps an item to its question when items repeat a question (GPQA's K
    shuffles): the interval and the detectable difference then widen by the square root of
    the design effect. McNemar's p stays item-level and is then optimistic; the verdict rests
    on the interval.
    """
    if margin_points < 0:
        raise ValueError("the margin must be >= 0 points")
    lost, gained, both, neither, unpaired = pair_outcomes(baseline, candidate)
    b, c = len(lost), len(gained)
    n = both + neither + b + c
    difference = (c - b) / n if n else 0.0
    interval = newcombe_paired(both, b, c, neither)
    deff = paired_design_effect(baseline, candidate, cluster_of) if cluster_of else 1.0
    if deff > 1.0:
        widen = math.sqrt(deff)
        interval = Interval(
            max(-1.0, difference - (difference - interval.low) * widen),
            min(1.0, difference + (interval.high - difference) * widen),
        )
    comparison = PairedComparison(
        n=n,
        both=both,
        only_baseline=b,
        only_candidate=c,
        neither=neither,
        unpaired=unpaired,
        baseline_accuracy=(both + b) / n if n else 0.0,
        candidate_accuracy=(both + c) / n if n else 0.0,
        difference=difference,
        interval=interval,
        mcnemar_p=mcnemar_exact_p(b, c),
        detectable=detectable_difference(b + c, n) * math.sqrt(deff),
        lost_ids=lost,
        gained_ids=gained,
        noise_floor=aa,
        design_effect=deff,
    )
    kind, text = verdict(comparison, margin_points, baseline_label, candidate_label)
    return replace(comparison, verdict=kind, verdict_text=text)


def verdict(
    comparison: PairedComparison,
    margin_points: float,
    baseline_label: str = "baseline",
    candidate_label: str = "candidate",
) -> tuple[VerdictKind, str]:
    """Judge the 95% interval of the difference (candidate - baseline) against the margin.

    A non-inferiority reading, as in "MXFP4 is within 1.5 points of BF16": `within` when the
    interval's lower end is no lower than -margin; `worse` when its upper end is below -margin;
    `better` when its lower end is above +margin; otherwise `inconclusive` at this n and
    discordance.
    """
    m = margin_points / 100
    low, high = comparison.interval.low, comparison.interval.high
    shown = (
        f"difference {100 * comparison.difference:+.2f} points, 95% CI "
        f"[{100 * low:+.2f}, {100 * high:+.2f}], McNemar p = {comparison.mcnemar_p:.3g}, "
        f"{comparison.discordant} of {comparison.n} items flipped"
    )
    if comparison.n == 0:
        kind: VerdictKind = "inconclusive"
        text = "inconclusive: the two runs share no scored items"
    elif low > m:
        kind = "better"
        text = (
            f"{candidate_label} is better than {baseline_label} by more than "
            f"{margin_points:g} points ({shown})"
        )
    elif low >= -m:
        kind = "within"
        text = f"{candidate_label} is within {margin_points:g} points of {baseline_label} ({shown})"
    elif high < -m:
        kind = "worse"
        text = (
            f"{candidate_label} is worse than {baseline_label} by more than "
            f"{margin_points:g} points ({shown})"
        )
    else:
        kind = "inconclusive"
        text = (
            f"inconclusive: smallest detectable difference is "
            f"{100 * comparison.detectable:.1f} points with this discordance ({shown})"
        )
    if comparison.noise_floor is not None and comparison.noise_floor.n:
        aa = comparison.noise_floor
        text += (
            f"; A/A noise floor: {aa.discordant} of {aa.n} items ({100 * aa.rate:.1f}%) "
            f"flip between identical runs, +-{aa.points:.2f} points"
        )
    return kind, text
