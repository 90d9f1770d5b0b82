"""Paired comparison of two stored accuracy results (the same protocol on the same items)."""

from __future__ import annotations

import re

from workers.accuracy.runner import INFRA_FAILURES
from workers.accuracy.stats import NoiseFloor, PairedComparison, compare, noise_floor
from workers.results import AccuracyResult

REPEAT_ID = re.compile(r"^(?P<question>.+):r\d+$")


class NotComparable(ValueError):
    pass


def question_of(item_id: str) -> str:
    """GPQA-style repeat ids ("<record id>:r2") belong to their question; others stand alone."""
    match = REPEAT_ID.match(item_id)
    return match.group("question") if match else item_id


def item_outcomes(result: AccuracyResult) -> dict[str, bool]:
    """item id -> correct, for every item the model answered.

    Infrastructure failures are left out (the model never saw the item); model failures
    (no answer, truncated, empty) count as wrong, as they do in the score.
    """
    if not result.items:
        raise NotComparable(
            f"{result.protocol} {result.metric}: the result has no per-item records"
        )
    return {
        item.item_id: bool(item.correct)
        for item in result.items
        if item.failure not in INFRA_FAILURES
    }


def check_comparable(baseline: AccuracyResult, candidate: AccuracyResult) -> None:
    if baseline.metric != candidate.metric:
        raise NotComparable(f"metrics differ: {baseline.metric} vs {candidate.metric}")
    if baseline.protocol_hash != candidate.protocol_hash:
        raise NotComparable(
            f"protocols differ ({baseline.protocol} {baseline.protocol_hash} vs "
            f"{candidate.protocol} {candidate.protocol_hash}): items are not the same"
        )


def compare_results(
    baseline: AccuracyResult,
    candidate: AccuracyResult,
    margin_points: float,
    baseline_label: str = "baseline",
    candidate_label: str = "candidate",
    aa: tuple[AccuracyResult, AccuracyResult] | None = None,
) -> PairedComparison:
    """Paired verdict; `aa` is two runs of one deployment, whose flips set the noise floor."""
    check_comparable(baseline, candidate)
    floor: NoiseFloor | None = None
    if aa is not None:
        check_comparable(baseline, aa[0])
        check_comparable(aa[0], aa[1])
        floor = noise_floor(item_outcomes(aa[0]), item_outcomes(aa[1]))
    return compare(
        item_outcomes(baseline),
        item_outcomes(candidate),
        margin_points,
        baseline_label,
        candidate_label,
        aa=floor,
        cluster_of=question_of,
    )
