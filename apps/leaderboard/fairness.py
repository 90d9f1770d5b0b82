"""What differs between deployments being compared: pure functions over plain facts."""

import math
from dataclasses import dataclass
from typing import Any

from workers.accuracy.stats import compare, wilson_fraction

# Facts that change what is being measured, in the order a reader should see them.
FACTS = [
    ("model", "Model"),
    ("quantization", "Quantization"),
    ("engine", "Engine"),
    ("engine_version", "Engine version"),
    ("hardware", "Hardware"),
    ("parallelism", "Parallelism"),
    ("speculative", "Speculative decoding"),
    ("provenance", "Provenance"),
    ("scenario", "Scenario"),
]
# Differences that make a comparison not like for like (hardware is what people compare).
UNFAIR = {"model", "quantization", "engine", "engine_version", "provenance", "scenario"}


@dataclass(frozen=True)
class Difference:
    key: str
    label: str
    values: list[str]
    unfair: bool


def differences(facts: list[dict[str, str]]) -> list[Difference]:
    found = []
    for key, label in FACTS:
        values = [f.get(key) or "—" for f in facts]
        if len(set(values)) > 1:
            found.append(Difference(key, label, values, key in UNFAIR))
    return found


@dataclass(frozen=True)
class AccuracyDelta:
    task: str
    baseline: str
    candidate: str
    difference_points: float
    low_points: float
    high_points: float
    paired: bool
    note: str


def accuracy_delta(
    baseline: dict[str, Any],
    candidate: dict[str, Any],
    *,
    baseline_label: str,
    candidate_label: str,
) -> AccuracyDelta | None:
    """Candidate minus baseline, in points, with a 95% interval.

    Paired (Newcombe, on shared items) when both have per-item outcomes; otherwise
    Newcombe's hybrid score interval for independent proportions, which needs both n.
    """
    items_a, items_b = baseline.get("items"), candidate.get("items")
    if items_a and items_b and items_a.keys() & items_b.keys():
        paired = compare(items_a, items_b, margin_points=0)
        return AccuracyDelta(
            task=baseline["task"],
            baseline=baseline_label,
            candidate=candidate_label,
            difference_points=100 * paired.difference,
            low_points=100 * paired.interval.low,
            high_points=100 * paired.interval.high,
            paired=True,
            note=f"paired on {paired.n} shared items, McNemar p = {paired.mcnemar_p:.3g}",
        )
    n_a, n_b = baseline.get("n"), candidate.get("n")
    if not n_a or not n_b:
        return None
    p_a, p_b = baseline["score"], candidate["score"]
    ia, ib = wilson_fraction(p_a, n_a), wilson_fraction(p_b, n_b)
    diff = p_b - p_a
    low = diff - math.sqrt((p_b - ib.low) ** 2 + (ia.high - p_a) ** 2)
    high = diff + math.sqrt((ib.high - p_b) ** 2 + (p_a - ia.low) ** 2)
    return AccuracyDelta(
        task=baseline["task"],
        baseline=baseline_label,
        candidate=candidate_label,
        difference_points=100 * diff,
        low_points=100 * low,
        high_points=100 * high,
        paired=False,
        note=f"unpaired (n = {n_a} and {n_b}); a paired run on the same items would be tighter",
    )
