"""Split-conformal bands from held-out errors: a band with the coverage it promises.

Pure. A score is |ln(measured / projected)| of a point the projection did not see (an
unreached point scores infinity). Given n scores exchangeable with a new point's, the
ceil((n + 1) x coverage)-th smallest, q, bounds the new score with probability at least
`coverage` (Vovk et al.; Lei et al. 2018), whatever the projection's own error; the band is
projected x [e^-q, e^q]. Too few scores for the promise (ceil((n+1)c) > n): no band
(infinite), never a narrower one.

Held-out points come in groups (one accelerator's points share its errors). A group with
fewer than MIN_CLUSTER_SCORES points is left out, and with fewer than MIN_GROUPS groups there
is no band: a few accelerators cannot show how one differs from another. The quantile pools
the groups' points, each point weighing the same (`pooled_quantile`): the held-out figure the
band is judged by is the share of all held-out points inside it, so the scores are read the
way the promise is kept. (Issue 56's first pass weighed every accelerator the same, Dunn,
Wasserman and Ramdas's pooled-CDF sets: an accelerator of 55 hard points weighed as much as
one of 318, and the bands covered 94% of held-out points where they promised 80%.)

Mondrian (per stratum): the points where the projection extrapolates (apps/projections/
validation.py stratum_of) get their own quantile, and never a narrower band than the points
it has seen.
"""

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

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


def pooled_quantile(scored: Sequence[tuple[str, float]], coverage: float = COVERAGE) -> float:
    """The split-conformal quantile of (group, score) pairs, every point weighing the same,
    over the groups with at least MIN_CLUSTER_SCORES points; infinite with fewer than
    MIN_GROUPS such groups."""
    groups: dict[str, list[float]] = {}
    for group, value in scored:
        groups.setdefault(group, []).append(value)
    kept = [values for values in groups.values() if len(values) >= MIN_CLUSTER_SCORES]
    if len(kept) < MIN_GROUPS:
        return math.inf
    return conformal_quantile([v for values in kept for v in values], coverage)


def stratum_bands(
    inner: Sequence[tuple[str, str, float]],
    outside: Sequence[tuple[str, float]],
    *,
    coverage: float = COVERAGE,
) -> dict[str, Band]:
    """Per stratum, from (group, stratum, score) held-out errors of an inner
    leave-one-group-out pass, and (group, score) errors made with each group's whole family
    left out. "seen": the inner points whose like was seen (all inner points when fewer than
    MIN_GROUPS groups have them). "extrapolated": the inner points that extrapolate, which
    were made as the judged ones are (one accelerator out of the rest), so their scores are
    exchangeable with theirs; the family-out errors (two accelerators fewer to learn from:
    larger errors than a held-out accelerator meets) only where too few groups extrapolate.
    Never narrower than "seen"."""
    seen = [(g, s) for g, stratum, s in inner if stratum == "seen"]
    q_seen = pooled_quantile(seen, coverage)
    if math.isinf(q_seen):
        q_seen = pooled_quantile([(g, s) for g, _, s in inner], coverage)
    beyond = [(g, s) for g, stratum, s in inner if stratum == "extrapolated"]
    q_ext = pooled_quantile(beyond, coverage)
    if math.isinf(q_ext):
        beyond += list(outside)
        q_ext = pooled_quantile(beyond, coverage)
    q_ext = max(q_ext, q_seen)
    return {
        "seen": Band.from_quantile(q_seen, coverage=coverage, scores=len(seen), stratum="seen"),
        "extrapolated": Band.from_quantile(
            q_ext, coverage=coverage, scores=len(beyond), stratum="extrapolated"
        ),
    }
