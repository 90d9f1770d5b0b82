"""What differs between deployments being compared: pure functions over plain facts, and
the facts themselves (`deployment_facts`). In catalog, below the board and the change-point
detection that both name what differs (issue 41: regressions no longer imports the board)."""

import math
from dataclasses import dataclass
from typing import Any

from apps.catalog.models import Deployment
from workers.accuracy.stats import PairedComparison, wilson_fraction

# Facts that change what is being measured, in the order a reader should see them.
FACTS = [
    ("model", "Model"),
    ("quantization", "Quantization"),
    ("engine", "Engine"),
    ("engine_version", "Engine version"),
    ("hardware", "Hardware"),
    ("parallelism", "Parallelism"),
    ("serving", "Prefill and decode"),
    ("nodes", "Nodes"),
    ("speculative", "Speculative decoding"),
    ("engine_flags", "Engine flags and kernels"),
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
    difference_points: float | None
    low_points: float | None
    high_points: float | None
    paired: bool
    note: str
    text: str = ""  # the difference and interval as every page prints it


def paired_delta(
    comparison: PairedComparison | None,
    error: str | None,
    *,
    task: str,
    baseline_label: str,
    candidate_label: str,
    text: str = "",
) -> AccuracyDelta:
    """A delta from the one paired comparison (apps.accuracy.selectors.paired_comparison),
    or the reason the pair was refused."""
    if comparison is None:
        return AccuracyDelta(
            task, baseline_label, candidate_label, None, None, None, True, f"not compared: {error}"
        )
    return AccuracyDelta(
        task=task,
        baseline=baseline_label,
        candidate=candidate_label,
        difference_points=100 * comparison.difference,
        low_points=100 * comparison.interval.low,
        high_points=100 * comparison.interval.high,
        paired=True,
        note=f"paired on {comparison.n} shared items, McNemar p = {comparison.mcnemar_p:.3g}",
        text=text,
    )


def accuracy_delta(
    baseline: dict[str, Any],
    candidate: dict[str, Any],
    *,
    baseline_label: str,
    candidate_label: str,
) -> AccuracyDelta | None:
    """Candidate minus baseline, in points, with Newcombe's hybrid score interval for
    independent proportions (both need n). Pairs with per-item outcomes go through
    `paired_delta` instead; results of different protocols are not compared."""
    if baseline.get("protocol_hash") != candidate.get("protocol_hash"):
        return AccuracyDelta(
            baseline["task"],
            baseline_label,
            candidate_label,
            None,
            None,
            None,
            False,
            "not compared: the protocols differ",
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


def deployment_facts(deployment: Deployment) -> dict[str, Any]:
    quant = deployment.quant_weights
    if deployment.quant_activations or deployment.quant_kv_cache:
        quant += (
            f" (act {deployment.quant_activations or '?'}, kv {deployment.quant_kv_cache or '?'})"
        )
    return {
        "model": deployment.model.name,
        "quantization": quant,
        "engine": deployment.engine.name,
        "engine_version": deployment.engine_version or "unstated",
        "hardware": f"{deployment.gpus}×{deployment.accelerator.sku}",
        "parallelism": deployment.parallelism_label,
        # Named apart from parallelism: one pool serving both, or a pool for each.
        "serving": deployment.serving_label,
        "nodes": {True: "multi-node", False: "one node", None: "unstated"}[deployment.multinode],
        "speculative": deployment.spec_method or "off",
        # Flags and hand-picked kernels change what is measured as much as parallelism does.
        "engine_flags": " · ".join(deployment.engine_flags or []) or "none",
    }
