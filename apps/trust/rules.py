"""The public board's rules: what a run must show to rank on the default board.

Pure functions over plain data (no ORM), so ingestion, the recheck command and tests share
them. Each rule has a stable name; a run that fails one is shown with the names and reasons.
The anchors: MLPerf's submission checker and closed-division accuracy floor (99% of the
reference), InferenceX's disclosure rules (image, flags, speculative settings).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from apps.runs.summary import PointFigures

# A quantized deployment's score may trail the same model's reference precision by at most
# this fraction of the reference score (MLPerf closed division: 99% of the reference). A score
# fails only when the upper end of its interval is below that floor: a sample of 1,319 items
# cannot tell 95.5% from 95.6%, and the rule must not pretend it can.
ACCURACY_MARGIN = 0.01
REFERENCE_PRECISIONS = frozenset({"BF16", "FP16", "FP32"})

RULES: dict[str, str] = {
    "run_complete": "the run ran to its planned end (one cancelled or stopped early is kept "
    "with what it measured, marked partial, and not ranked)",
    "facts_complete": "deployment facts complete: engine and version, image digest, "
    "parallelism, quantization of weights / activations / KV cache, speculative method and "
    "draft tokens",
    "engine_flags_disclosed": "the engine's launch flags are disclosed",
    "rankable_point": "at least one load point that can rank (prompts matched, client not bound)",
    "prompt_lengths_matched": "the ranked point's prompts matched their target lengths (±1 token)",
    "client_not_bound": "the load generator was not the bottleneck at the ranked point",
    "success_rate": "success rate at least the SLO's minimum at the ranked point",
    "accuracy_for_quantization": "a quantized deployment has an accuracy result on the same "
    f"deployment, within {ACCURACY_MARGIN:.0%} of the reference precision's score where one "
    "exists (failing when even the upper end of its interval is below)",
    "audit_passed": "the run's figures and facts agree with each other and with the physical "
    "ceiling (the row audit, workers/audit.py; a flagged run is shown with its reasons)",
}

# Rules a run of an origin cannot meet by that origin's nature, with why (docs/methodology.md,
# "Rules per origin"). Such a rule is waived only while the figure it reads is not reported: a
# peer's file that does report it (a success rate of 90%, say) fails like any other run. A
# peer tool's file states the target lengths, not each prompt as the server counted it, and
# only inferboard's own load generator measures its own load; measured runs keep every rule.
WAIVED_WHEN_NOT_REPORTED: dict[str, dict[str, str]] = {
    "imported": {
        "prompt_lengths_matched": "a peer tool's file states its target lengths, not each "
        "prompt as the server counted it",
        "client_not_bound": "only inferboard's load generator reports its own load",
        "success_rate": "a peer tool's aggregate may leave out its failed requests",
    },
}

# Deployment facts an imported run states another way, or that its source does not publish,
# with why (docs/methodology.md, "Rules per origin"). The first two are met only where the run
# states its image: InferenceX names each run's image by tag (its configuration's history
# spans images, so the run, not the deployment, carries it), and a tag names the release but
# is no digest, which no peer publishes. The last two are waived: a peer's configuration names
# one precision, its weights'; the KV cache's is taken from a recipe's flags where they set it.
IMPORTED_FACTS: dict[str, tuple[bool, str]] = {
    "engine.version": (True, "named by the run's image tag"),
    "engine.image_digest": (True, "the run's image is stated by tag; peers publish no digest"),
    "quantization.activations": (False, "a peer's configuration states one precision"),
    "quantization.kv_cache": (False, "set only where a recipe's flags state it"),
}


@dataclass(frozen=True)
class AccuracyFact:
    protocol: str
    task: str
    score: float
    ci_high: float | None = None  # the interval's upper end; None: not stated (the score)


@dataclass(frozen=True)
class RuleInput:
    deployment: dict[str, Any]  # the document's `deployment` section
    points: list[PointFigures]
    best_point_id: int | None
    min_success_rate: float
    accuracy: list[AccuracyFact] = field(default_factory=list)  # same deployment
    # The same model's results at a reference precision, by (protocol, task): best score.
    reference: dict[tuple[str, str], float] = field(default_factory=dict)
    origin: str = ""  # Run.Origin's value; picks WAIVED_WHEN_NOT_REPORTED's entry
    # The image the run states beside its deployment (an imported run's tag), if any.
    image: str | None = None
    # Why the run ended before its plan, in its source's words (the document's stopped_early).
    stopped_early: str | None = None
    # The row audit's reason codes (Run.audit_reasons).
    audit_codes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Failure:
    rule: str
    reason: str

    def as_json(self) -> dict[str, str]:
        return {"rule": self.rule, "reason": self.reason}


def is_quantized(deployment: dict[str, Any]) -> bool:
    quant = deployment.get("quantization") or {}
    stated = [quant.get("weights"), quant.get("activations"), quant.get("kv_cache")]
    return any(v and v.upper() not in REFERENCE_PRECISIONS for v in stated)


def _pools(deployment: dict[str, Any]) -> list[dict[str, Any] | None]:
    split = deployment.get("disaggregation") or {}
    return [split.get("prefill"), split.get("decode")] if split else []


def _missing_facts(deployment: dict[str, Any]) -> list[str]:
    engine = deployment.get("engine") or {}
    quant = deployment.get("quantization") or {}
    parallel = deployment.get("parallelism") or {}
    missing = []
    if not engine.get("version"):
        missing.append("engine.version")
    if not engine.get("image_digest"):
        missing.append("engine.image_digest")
    # A disaggregated deployment states its parallelism per pool, each pool its own shape.
    pools = _pools(deployment) or [parallel]
    if not all(pool and any(pool.get(k) for k in ("tp", "dp", "ep", "pp")) for pool in pools):
        missing.append("parallelism")
    for part in ("weights", "activations", "kv_cache"):
        if not quant.get(part):
            missing.append(f"quantization.{part}")
    speculative = deployment.get("speculative")
    if speculative and not speculative.get("draft_tokens"):
        missing.append("speculative.draft_tokens")
    return missing


def _imported_states(fact: str, image: str | None) -> bool:
    """Whether an imported run meets `fact` by its origin's rule (IMPORTED_FACTS)."""
    if fact not in IMPORTED_FACTS:
        return False
    needs_image, _ = IMPORTED_FACTS[fact]
    return bool(image) or not needs_image


def check(data: RuleInput) -> list[Failure]:
    """Every rule the run fails, in RULES order; empty when it may rank."""
    failures: list[Failure] = []
    if data.stopped_early:
        failures.append(Failure("run_complete", f"stopped early: {data.stopped_early}"))
    missing = _missing_facts(data.deployment)
    if data.origin == "imported":
        missing = [m for m in missing if not _imported_states(m, data.image)]
    if missing:
        failures.append(Failure("facts_complete", "not stated: " + ", ".join(missing)))
    if not data.deployment.get("engine_flags"):
        failures.append(Failure("engine_flags_disclosed", "no engine flags stated"))
    best = next((p for p in data.points if p.point_id == data.best_point_id), None)
    waived = WAIVED_WHEN_NOT_REPORTED.get(data.origin, {})
    if best is None:
        failures.append(_no_rankable_point(data.points))
    else:
        if best.prompt_length_mismatch_rate is None and "prompt_lengths_matched" not in waived:
            failures.append(
                Failure("prompt_lengths_matched", "prompt lengths were not checked (not reported)")
            )
        if best.client_bound is None and "client_not_bound" not in waived:
            failures.append(Failure("client_not_bound", "the client's load was not reported"))
        if best.success_rate is None:
            if "success_rate" not in waived:
                failures.append(Failure("success_rate", "success rate not reported"))
        elif best.success_rate < data.min_success_rate - 1e-12:
            failures.append(
                Failure(
                    "success_rate",
                    f"success {best.success_rate:.1%} < {data.min_success_rate:.1%} (the SLO's)",
                )
            )
    failures.extend(_accuracy(data))
    if data.audit_codes:
        codes = ", ".join(dict.fromkeys(data.audit_codes))
        failures.append(Failure("audit_passed", f"flagged by the row audit: {codes}"))
    return failures


def _no_rankable_point(points: list[PointFigures]) -> Failure:
    if not points:
        return Failure("rankable_point", "the run has no load points")
    if all(p.client_bound for p in points):
        return Failure("client_not_bound", "the client was saturated at every point")
    if all((p.prompt_length_mismatch_rate or 0) > 0 for p in points):
        return Failure("prompt_lengths_matched", "prompts missed their lengths at every point")
    return Failure("rankable_point", "no point has throughput that can rank")


def _accuracy(data: RuleInput) -> list[Failure]:
    if not is_quantized(data.deployment):
        return []
    if not data.accuracy:
        return [
            Failure(
                "accuracy_for_quantization",
                "quantized, and no accuracy result on this deployment",
            )
        ]
    failures = []
    for result in data.accuracy:
        reference = data.reference.get((result.protocol, result.task))
        if reference is None:
            continue
        floor = reference * (1 - ACCURACY_MARGIN)
        upper = result.ci_high if result.ci_high is not None else result.score
        if upper < floor - 1e-12:
            failures.append(
                Failure(
                    "accuracy_for_quantization",
                    f"{result.protocol} {result.task}: {result.score:.3f} (interval up to "
                    f"{upper:.3f}) is below "
                    f"{floor:.3f} ({1 - ACCURACY_MARGIN:.0%} of the reference precision's "
                    f"{reference:.3f})",
                )
            )
    return failures
