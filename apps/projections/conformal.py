"""Split-conformal bands from held-out errors: a band with the coverage it promises.

Pure. A score is |ln(measured / projected)| of a point the projection did not see (an
unreached point scores infinity). Given n scores exchangeable with a new point's, the
ceil((n + 1) x coverage)-th smallest, q, bounds the new score with probability at least
`coverage` (Vovk et al.; Lei et al. 2018), whatever the projection's own error; the band is
projected x [e^-q, e^q]. Too few scores for the promise (ceil((n+1)c) > n): no band
(infinite), never a narrower one.

Mondrian (per stratum): the points where the projection extrapolates (apps/projections/
validation.py stratum_of) get their own quantile, and never a narrower band than the points
it has seen (clustered_bands).
"""

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

COVERAGE = 0.80


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


def band(scores: Sequence[float], *, coverage: float = COVERAGE, stratum: str = "all") -> Band:
    q = conformal_quantile(scores, coverage)
    return Band.from_quantile(q, coverage=coverage, scores=len(scores), stratum=stratum)


MIN_CLUSTER_SCORES = 5


def clustered_bands(
    scored: Sequence[tuple[str, str, float]],
    *,
    coverage: float = COVERAGE,
    extrapolated: Sequence[tuple[str, float]] | None = None,
) -> dict[str, Band]:
    """Bands when points come in groups that are not exchangeable with each other (one
    accelerator's points share its errors): each group's own `coverage` quantile of its
    scores is one score, and the conformal quantile is taken over the groups. With k
    groups it promises, for a new group exchangeable with them, a band holding at least
    `coverage` of its points with probability at least `coverage`; with 5 groups at 80%
    that is the widest group's quantile. `scored` holds (group, stratum, score); the
    "extrapolated" band uses only the groups' extrapolated points (groups with at least
    MIN_CLUSTER_SCORES of them), or the (group, score) pairs of `extrapolated` when given
    (nested.py: errors made with the group's whole family left out), and is never narrower
    than the band over all points."""

    def group_quantiles(rows: Sequence[tuple[str, str, float]]) -> list[float]:
        groups: dict[str, list[float]] = {}
        for group, _, value in rows:
            groups.setdefault(group, []).append(value)
        return [
            float(np.quantile(values, coverage, method="higher"))
            for values in groups.values()
            if len(values) >= MIN_CLUSTER_SCORES
        ]

    everything = group_quantiles(scored)
    q_all = conformal_quantile(everything, coverage)
    if extrapolated is None:
        rows = [r for r in scored if r[1] == "extrapolated"]
    else:
        rows = [(group, "extrapolated", value) for group, value in extrapolated]
    outside = group_quantiles(rows)
    q_ext = conformal_quantile(outside, coverage) if len(outside) >= 4 else q_all
    return {
        "seen": Band.from_quantile(q_all, coverage=coverage, scores=len(scored), stratum="seen"),
        "extrapolated": Band.from_quantile(
            max(q_all, q_ext), coverage=coverage, scores=len(scored), stratum="extrapolated"
        ),
    }
