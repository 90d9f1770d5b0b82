"""Which point of a run the leaderboard shows: pure, so ingestion and migrations share it.

The best point is the highest throughput per GPU among points that meet the scenario's
SLO; when none meets it, the best of those that cannot be checked (a metric the SLO needs
was not reported); when none can be checked either, the best that misses.
"""

from dataclasses import dataclass

MEETS, MISSES, UNVERIFIED = 1, 0, -1
# The Point columns best_point() reads.
FIGURE_FIELDS = (
    "output_tok_s",
    "unlabelled_tok_s",
    "ttft_p50_ms",
    "ttft_p99_ms",
    "tpot_p50_ms",
    "e2el_p99_ms",
)


@dataclass(frozen=True)
class SloBounds:
    ttft_ms: float | None = None
    ttft_percentile: float = 99
    tpot_ms: float | None = None
    e2el_ms: float | None = None

    @classmethod
    def of(cls, scenario) -> "SloBounds":
        """The SLO of a Scenario row (or none for runs without a scenario)."""
        if scenario is None:
            return cls()
        return cls(
            ttft_ms=scenario.slo_ttft_ms,
            ttft_percentile=scenario.slo_ttft_percentile,
            tpot_ms=scenario.slo_tpot_ms,
            e2el_ms=scenario.slo_e2el_ms,
        )

    @property
    def any(self) -> bool:
        return any(v is not None for v in (self.ttft_ms, self.tpot_ms, self.e2el_ms))


@dataclass(frozen=True)
class PointFigures:
    point_id: int
    output_tok_s: float | None
    unlabelled_tok_s: float | None
    ttft_p50_ms: float | None
    ttft_p99_ms: float | None
    tpot_p50_ms: float | None
    e2el_p99_ms: float | None


@dataclass(frozen=True)
class Best:
    point_id: int
    tput_per_gpu: float
    meets_slo: int | None  # None: the scenario has no SLO


def slo_status(point: PointFigures, slo: SloBounds) -> int | None:
    if not slo.any:
        return None
    ttft = point.ttft_p50_ms if slo.ttft_percentile == 50 else point.ttft_p99_ms
    checks = [
        (slo.ttft_ms, ttft),
        (slo.tpot_ms, point.tpot_p50_ms),
        (slo.e2el_ms, point.e2el_p99_ms),
    ]
    needed = [(bound, value) for bound, value in checks if bound is not None]
    if any(value is None for _, value in needed):
        return UNVERIFIED
    return MEETS if all(value <= bound for bound, value in needed) else MISSES


def best_point(points: list[PointFigures], slo: SloBounds, gpus: int) -> Best | None:
    rank = {MEETS: 2, UNVERIFIED: 1, MISSES: 0, None: 2}
    candidates = []
    for point in points:
        tput = point.output_tok_s if point.output_tok_s is not None else point.unlabelled_tok_s
        if tput is None:
            continue
        status = slo_status(point, slo)
        candidates.append((rank[status], tput / gpus, point.point_id, status))
    if not candidates:
        return None
    _, per_gpu, point_id, status = max(candidates)
    return Best(point_id=point_id, tput_per_gpu=per_gpu, meets_slo=status)
