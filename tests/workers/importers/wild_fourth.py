"""The wild corpus's fourth pass (issue 59): the facts, checks and refusals of the formats and
files it added, merged into test_wild_corpus's tables (which keep the rest)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from workers.importers import Facts
from workers.results import ResultDocument

# Words that say a refusal is by name, besides the format's: the file holds nothing to import.
NOTHING_MEASURED = "holds no measurement"

# Facts a file cannot state, by file-name prefix; matched before test_wild_corpus's own.
FACTS_BY_PREFIX: dict[str, Facts] = {
    # ajith-sirra-amd/InferenceMAX_Rocm_Team's 0603_sa agentic runs of Kimi-K2.5 on B200: the
    # run folder names TP8, vLLM, FP4 weights and a b200-dgxc runner.
    "aiperf/agentic_kimik2.5_tp8": Facts.model_validate(
        {
            "deployment": {
                "accelerator": "B200",
                "gpus": 8,
                "engine": {"name": "vllm"},
                "quantization": {"weights": "FP4"},
            }
        }
    ),
}

RUNNER_LATENCY = {f"{stat}_{metric}_ms": (metric, slot)
                  for stat, slot in (("median", "p50"), ("p99", "p99"))
                  for metric in ("ttft", "tpot", "itl", "e2el")}  # fmt: skip


def check_inferencex_runner_result(docs: list[ResultDocument], raw: Any) -> None:
    # together_runner's compare.py emit: the benchmark's own totals, never per GPU.
    [doc] = docs
    [point] = doc.points
    metrics = raw["metrics"]
    assert doc.model.name == raw["model"]
    assert doc.deployment.accelerator == raw["hw"].upper()
    assert doc.deployment.gpus == doc.deployment.parallelism.tp == raw["tp"]
    assert doc.deployment.parallelism.ep == (raw["ep"] or None)  # 0: expert parallelism off
    assert doc.deployment.engine.name == raw["framework"]
    assert doc.deployment.quantization.weights == raw["precision"].upper()
    assert (doc.scenario.input_tokens, doc.scenario.output_tokens) == (raw["isl"], raw["osl"])
    assert point.concurrency == raw["conc"]
    assert point.throughput.total_tok_s == metrics["total_token_throughput"]
    assert point.throughput.output_tok_s == metrics["output_token_throughput"]
    assert point.throughput.requests_per_s == metrics.get("request_throughput")
    succeeded = metrics.get("successful_requests")
    assert (point.requests.succeeded if point.requests else None) == succeeded
    assert point.requests is None or point.requests.failed is None  # not counted apart
    checked = 0
    for key, (metric, slot) in RUNNER_LATENCY.items():
        if key in metrics:
            assert getattr(getattr(point.latency_ms, metric), slot) == metrics[key], key
            checked += 1
    assert checked >= 7
    # The host's power block counts the host's GPUs, kept as written, never the GPU count.
    assert doc.environment.extra["host_gpu_power"] == raw["gpu"]
    assert doc.environment.extra["host"] == raw["host"]
    assert doc.status == "succeeded"


CHECKS: dict[str, Callable[[list[ResultDocument], Any], None]] = {
    "inferencex-runner-result": check_inferencex_runner_result,
}

# Files refused on purpose: relative path -> words the message must contain.
REFUSED: dict[str, tuple[str, ...]] = {
    # aiperf cancelled the run before any of its 32 requests succeeded.
    "aiperf/agentic_kimik2.5_tp8_conc32_offloadlmcache_fp4_vllm_tp8-ep1-dpafalse_disagg-false"
    "_spec-none_conc32_b200-dgxc_05_profile_export_aiperf.json": (
        "was_cancelled: true",
        "before any request succeeded (32 failed)",
        NOTHING_MEASURED,
    ),
}
