"""Which point of a run the leaderboard shows: pure, so ingestion and migrations share it.

Every point is judged by the one SLO rule (workers/slo.py) at the scenario's default SLO tier
(`default_slo`, apps/catalog/slo_tiers.py). The best point is the highest throughput per GPU
among points that meet it; when none meets it, the best
of those that cannot be checked (a bounded percentile, or the success rate, was not
reported); when none can be checked either, the best that misses. A point whose client was
saturated (`client_bound`) or whose prompts missed their target length is never chosen
(workers.figures.PointView, the one validity rule): its figures do not describe the
deployment under the scenario's label.
"""

from dataclasses import dataclass, field
from typing import Any

from apps.catalog import slo_tiers
from workers import slo as slo_rule
from workers.figures import PointView, throughput
from workers.figures import per_gpu as per_deployed_gpu

MEETS, MISSES, UNVERIFIED = 1, 0, -1
STATUS_CODES = {"meets": MEETS, "misses": MISSES, "cannot_check": UNVERIFIED}
STATUS_NAMES = {code: name for name, code in STATUS_CODES.items()}
# The Point columns best_point() reads.
FIGURE_FIELDS = (
    "ordinal",
    "output_tok_s",
    "unlabelled_tok_s",
    "latency_ms",
    "interactivity",
    "success_rate",
    "prompt_length_mismatch_rate",
    "client_bound",
)


def scenario_shape(scenario: Any) -> tuple[int | None, int | None]:
    """A Scenario row's (input, output) tokens, which read a figure of unstated kind."""
    if scenario is None:
        return None, None
    return scenario.input_tokens, scenario.output_tokens


# The SLO a scenario's definition states: defined once, with the tiers (apps/catalog).
scenario_slo = slo_tiers.scenario_own_slo


def default_slo(scenario: Any) -> slo_rule.Slo:
    """The SLO a run's leaderboard point is chosen at: its scenario's default tier
    (apps/catalog/slo_tiers.py), the one every default view shows; no SLO without a
    scenario. Reads attributes only, so historical models in migrations work too."""
    if scenario is None:
        return slo_rule.Slo()
    return slo_tiers.default_tier(scenario).slo


@dataclass(frozen=True)
class PointFigures:
    point_id: int
    output_tok_s: float | None
    unlabelled_tok_s: float | None
    latency_ms: dict[str, Any] = field(default_factory=dict)
    interactivity: dict[str, Any] = field(default_factory=dict)
    success_rate: float | None = None
    prompt_length_mismatch_rate: float | None = None
    client_bound: bool | None = None
    ordinal: int = 0

    @property
    def eligible(self) -> bool:
        """Whether this point may ever be a leaderboard point, by the one validity rule. The
        success floor is not applied here: the SLO rule ranks such a point as missing and
        names why, so a run of only such points still shows."""
        return PointView.of(self).invalid_reason() is None


def point_verdict(point: PointFigures, slo: slo_rule.Slo) -> slo_rule.Verdict:
    figures = slo_rule.point_figures(point.latency_ms or {}, point.interactivity or {})
    return slo_rule.judge(slo, figures, point.success_rate)


@dataclass(frozen=True)
class Best:
    point_id: int
    tput_per_gpu: float
    meets_slo: int | None  # None: the scenario has no SLO


def slo_status(point: PointFigures, slo: slo_rule.Slo) -> int | None:
    if not slo.any:
        return None
    return STATUS_CODES[point_verdict(point, slo).status]


def best_point(
    points: list[PointFigures],
    slo: slo_rule.Slo,
    gpus: int,
    shape: tuple[int | None, int | None] = (None, None),
) -> Best | None:
    """The run's leaderboard point. Output tok/s by the one reading (workers.figures
    .throughput): a figure of unstated kind at its lower reading through the scenario's
    `shape` (input, output tokens), as the board ranks and prices it."""
    rank = {MEETS: 2, UNVERIFIED: 1, MISSES: 0, None: 2}
    candidates = []
    for point in points:
        if not point.eligible:
            continue
        tput = throughput(
            "output",
            output_tok_s=point.output_tok_s,
            unlabelled_tok_s=point.unlabelled_tok_s,
            input_tokens=shape[0],
            output_tokens=shape[1],
        ).value
        if tput is None:
            continue
        status = slo_status(point, slo)
        candidates.append((rank[status], per_deployed_gpu(tput, gpus), point.point_id, status))
    if not candidates:
        return None
    _, per_gpu, point_id, status = max(candidates)
    return Best(point_id=point_id, tput_per_gpu=per_gpu, meets_slo=status)


def run_figures(rows: list[dict[str, Any]], document: dict[str, Any]) -> list[PointFigures]:
    """PointFigures from Point rows (`values("id", *FIGURE_FIELDS)`). Rows of a schema before
    the client_bound column (migration 0005) read it from the run's stored document."""
    doc_points = (document or {}).get("points") or []
    figures = []
    for row in rows:
        row = dict(row)
        if "client_bound" not in row:
            ordinal = row["ordinal"]
            extra = doc_points[ordinal] if ordinal < len(doc_points) else {}
            row["client_bound"] = extra.get("client_bound")
        figures.append(PointFigures(point_id=row.pop("id"), **row))
    return figures
