"""Split-conformal bands from held-out errors: a band with the coverage it promises.

Pure. A score is |ln(measured / projected)| of a point the projection did not see (an
unreached point scores infinity). Given n scores exchangeable with a new point's, the
ceil((n + 1) x coverage)-th smallest, q, bounds the new score with probability at least
`coverage` (Vovk et al.; Lei et al. 2018), whatever the projection's own error; the band is
projected x [e^-q, e^q]. Too few scores for the promise (ceil((n+1)c) > n): no band
(infinite), never a narrower one.

Held-out points come in groups (one accelerator's points share its errors), and the pages
promise a share of a new accelerator's points. The bands pages draw (`balanced_bands`) are
weighted split-conformal (Tibshirani et al. 2019) with every group weighing the same, its
points sharing its weight: the quantile of the groups' pooled distribution, as in Dunn,
Wasserman and Ramdas's pooled-CDF sets for two-layer hierarchical data. It promises
`coverage` of a new group's points on average over groups; with five or six groups that is
approximate, so bench/projection_error.py reports the coverage reached out of sample.
(Issue 44's clustered rule promised instead that 80% of new groups hold 80% of their
points: with five groups, the widest group's 80th percentile, which covered 95%.)

Mondrian (per stratum): the points where the projection extrapolates (apps/projections/
validation.py stratum_of) get their own quantile, and never a narrower band than the points
it has seen.
"""

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

COVERAGE = 0.80
STRATA = ("seen", "extrapolated")


def score(measured: float, projected: float | None) -> float:
    if not projected or projected <= 0 or measured <= 0:
        return math.inf
    return abs(math.log(measured / projected))


def conformal_quantile(scores: Iterable[float], coverage: float = COVERAGE) -> float:
    """The split-conformal quantile: the ceil((n+1)c)-th smallest score (inf when n is too
    small to promise c)."""
    ordered = sorted(scores)
    rank = math.ceil((len(ordered) + 1) * coverage)
    if rank > len(ordered):
        return math.inf
    return ordered[rank - 1]


@dataclass(frozen=True)
class Band:
    """measured / projected lies in [low, high] with the stated coverage."""

    low: float
    high: float
    coverage: float
    scores: int  # how many held-out errors it was built from
    stratum: str = "all"

    @classmethod
    def from_quantile(cls, q: float, *, coverage: float, scores: int, stratum: str) -> "Band":
        return cls(math.exp(-q), math.exp(q), coverage, scores, stratum)

    @property
    def q(self) -> float:
        return math.log(self.high)

    @property
    def width(self) -> float:
        """high / low: how many times the band's top exceeds its bottom (e^2q)."""
        return self.high / self.low if self.low > 0 else math.inf

    def covers(self, ratio: float | None) -> bool:
        return ratio is not None and self.low <= ratio <= self.high


# A group with fewer held-out points than this gives no quantile of its own.
MIN_CLUSTER_SCORES = 5


# Fewer accelerators than this cannot show how one differs from another: no quantile.
MIN_GROUPS = 3


def balanced_quantile(scored: Sequence[tuple[str, float]], coverage: float = COVERAGE) -> float:
    """The weighted split-conformal quantile of (group, score) pairs, each group weighing
    the same: the smallest score whose weighted share of scores at or below it, with the new
    point's own weight (one point of a group of average size) counted at infinity, reaches
    `coverage`. Infinite with fewer than MIN_GROUPS groups of MIN_CLUSTER_SCORES points."""
    groups: dict[str, list[float]] = {}
    for group, value in scored:
        groups.setdefault(group, []).append(value)
    groups = {g: v for g, v in groups.items() if len(v) >= MIN_CLUSTER_SCORES}
    if len(groups) < MIN_GROUPS:
        return math.inf
    values = np.concatenate([np.asarray(v, dtype=float) for v in groups.values()])
    weights = np.concatenate([np.full(len(v), 1 / len(v)) for v in groups.values()])
    new_point = 1 / float(np.mean([len(v) for v in groups.values()]))
    order = np.argsort(values, kind="stable")
    shares = np.cumsum(weights[order]) / (weights.sum() + new_point)
    reached = np.nonzero(shares >= coverage - 1e-12)[0]
    return float(values[order][reached[0]]) if len(reached) else math.inf


def balanced_bands(
    inner: Sequence[tuple[str, str, float]],
    outside: Sequence[tuple[str, float]],
    *,
    coverage: float = COVERAGE,
) -> dict[str, Band]:
    """Per stratum, from (group, stratum, score) held-out errors of an inner pass and
    (group, score) errors made with each group's whole family left out. "seen": the inner
    points whose like was seen (all inner points when fewer than MIN_GROUPS groups have
    them). "extrapolated": the inner points that extrapolate and every family-out one (an
    extrapolation may be to another engine on a known family, or to a new family: the
    band is made of both kinds); never narrower than "seen"."""
    seen = [(g, s) for g, stratum, s in inner if stratum == "seen"]
    q_seen = balanced_quantile(seen, coverage)
    if math.isinf(q_seen):
        q_seen = balanced_quantile([(g, s) for g, _, s in inner], coverage)
    beyond = [(g, s) for g, stratum, s in inner if stratum == "extrapolated"] + list(outside)
    q_ext = max(balanced_quantile(beyond, coverage), q_seen)
    return {
        "seen": Band.from_quantile(q_seen, coverage=coverage, scores=len(seen), stratum="seen"),
        "extrapolated": Band.from_quantile(
            q_ext, coverage=coverage, scores=len(beyond), stratum="extrapolated"
        ),
    }
