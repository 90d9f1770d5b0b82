"""The wild corpus's fourth pass (issue 59): the facts, checks and refusals of the formats and
files it added, merged into test_wild_corpus's tables (which keep the rest)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from workers.importers import Facts
from workers.results import ResultDocument

# Words that say a refusal is by name, besides the format's: the file holds nothing to import.
NOTHING_MEASURED = "holds no measurement"


def _given(accelerator: str, gpus: int, engine: str | None, weights: str, **more: Any) -> Facts:
    deployment: dict[str, Any] = {
        "accelerator": accelerator,
        "gpus": gpus,
        "quantization": {"weights": weights},
    }
    if engine:
        deployment["engine"] = {"name": engine}
    return Facts.model_validate({"deployment": deployment, **more})


# Facts a file cannot state, by file-name prefix; matched before test_wild_corpus's own.
FACTS_BY_PREFIX: dict[str, Facts] = {
    # ajith-sirra-amd/InferenceMAX_Rocm_Team's 0603_sa agentic runs of Kimi-K2.5 on B200: the
    # run folder names TP8, vLLM, FP4 weights and a b200-dgxc runner.
    "aiperf/agentic_kimik2.5_tp8": _given("B200", 8, "vllm", "FP4"),
    # zhangxinyuehfad/vllm-benchmarks (a vllm-ascend fork): its nightly latency test runs
    # meta-llama/Meta-Llama-3-8B-Instruct at TP1 with dummy weights on an Ascend NPU and
    # benchmark_latency's default lengths (32 in, 128 out); the file states none of it.
    "vllm-bench-latency/": _given(
        "Ascend 910B",
        1,
        None,  # the file's own: vLLM
        "BF16",
        model="meta-llama/Meta-Llama-3-8B-Instruct",
        scenario={"input_tokens": 32, "output_tokens": 128},
    ),
    # philschmid/llmperf-bench: TGI 2.0.1 on one 24 GB GPU (as for its llmperf-sweep files);
    # the model is the file name's (its '/' written as '_'). GPU model and weights arbitrary;
    # TGI in two of its spellings, which name one engine.
    "llmperf-condensed/llmperf-bench_tgi-2.0.1_meta-llama": _given(
        "A10G", 1, "text-generation-inference", "BF16", model="meta-llama/Meta-Llama-3-8B-Instruct"
    ),
    "llmperf-condensed/llmperf-bench_tgi-2.0.1_mistralai": _given(
        "A10G", 1, "tgi", "BF16", model="mistralai/Mistral-7B-Instruct-v0.2"
    ),
    # Reports guidellm 0.8.1 wrote here against the repository's own streaming test server
    # (workers/testing/fault_server.py, a test double): the "hardware" is this machine's CPU.
    "guidellm/inferboard-generated": _given("CPU", 1, "inferboard-fault-server", "F16"),
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


def check_vllm_bench_latency(docs: list[ResultDocument], raw: Any) -> None:
    # A latency-only run: the iterations' latencies, in ms, and nothing invented beside them.
    [doc] = docs
    [point] = doc.points
    ms = [value * 1000 for value in raw["latencies"]]
    e2el = point.latency_ms.e2el
    assert math.isclose(e2el.mean, raw["avg_latency"] * 1000, rel_tol=1e-12)
    for theirs, ours in (("50", "p50"), ("90", "p90"), ("99", "p99")):
        assert math.isclose(getattr(e2el, ours), raw["percentiles"][theirs] * 1000, rel_tol=1e-12)
    assert (e2el.min, e2el.max) == (min(ms), max(ms))
    assert e2el.method.startswith("linear")
    assert point.throughput.model_dump(exclude_none=True) == {}  # no throughput invented
    assert point.requests is None and point.concurrency is None  # the file states neither
    assert doc.deployment.engine.name == "vllm"  # the benchmark runs vLLM's own engine
    assert doc.environment.extra["iterations"] == len(raw["latencies"])
    assert doc.environment.extra["percentiles_as_written"] == raw["percentiles"]


def check_llmperf_condensed(docs: list[ResultDocument], raw: Any) -> None:
    # llmperf-bench's condensed sweep: one point per concurrency, its five figures each.
    [doc] = docs
    assert [p.concurrency for p in doc.points] == [int(k) for k in raw]
    for point, (key, row) in zip(doc.points, raw.items(), strict=True):
        assert point.concurrency == row["concurrency"]
        assert point.latency_ms.ttft.mean == row["first-time-to-token_mean_in_ms"]
        assert point.throughput.output_tok_s == row["throughput_token_per_s"]
        assert point.requests is None  # the condensed form keeps no counts
        aside = doc.environment.extra["inter_token_latency_mean_ms_by_concurrency"][key]
        assert aside == {"latency_ms_per_token": row["latency_ms_per_token"]}
        assert point.latency_ms.tpot is None  # llmperf's inter-token latency is not TPOT
        assert (doc.scenario.input_tokens, doc.scenario.output_tokens) == (
            row["input_token_length"],
            row["output_token_length"],
        )
    assert doc.scenario.dataset == "sonnet"


def check_guidellm_v2(docs: list[ResultDocument], raw: Any) -> None:
    # Report version 2: arguments under config.spec, each benchmark as in 0.5.
    [doc] = docs
    assert raw["metadata"]["version"] == 2
    assert doc.model.name == raw["config"]["spec"]["backend"]["model"]
    assert doc.environment.extra["target"] == raw["config"]["spec"]["backend"]["target"]
    assert len(doc.points) == len(raw["benchmarks"])
    for point, bench in zip(doc.points, raw["benchmarks"], strict=True):
        metrics = {name: (m or {}).get("successful") for name, m in bench["metrics"].items()}
        totals, strategy = bench["metrics"]["request_totals"], bench["config"]["strategy"]
        assert point.label == strategy["type_"]
        if strategy["type_"] == "constant":
            assert (point.request_rate, point.concurrency) == (strategy["rate"], None)
        else:
            assert (point.concurrency, point.request_rate) == (strategy["streams"], None)
        assert point.window_s == bench["duration"]
        assert (point.requests.succeeded, point.requests.failed) == (
            totals["successful"],
            totals["errored"] + totals["incomplete"],
        )
        assert point.throughput.requests_per_s == metrics["requests_per_second"]["mean"]
        assert point.throughput.output_tok_s == metrics["output_tokens_per_second"]["mean"]
        ttft = metrics["time_to_first_token_ms"]
        assert (point.latency_ms.ttft.p50, point.latency_ms.ttft.p99) == (
            ttft["percentiles"]["p50"],
            ttft["percentiles"]["p99"],
        )
        assert point.latency_ms.e2el.p99 == metrics["request_latency"]["percentiles"]["p99"] * 1000
        assert point.latency_ms.tpot is None  # token-weighted in guidellm: kept aside
    failed = sum(b["metrics"]["request_totals"]["errored"] for b in raw["benchmarks"])
    assert doc.status == ("partial" if failed else "succeeded")


CHECKS: dict[str, Callable[[list[ResultDocument], Any], None]] = {
    "inferencex-runner-result": check_inferencex_runner_result,
    "vllm-bench-latency": check_vllm_bench_latency,
    "llmperf-condensed": check_llmperf_condensed,
}

# Files refused on purpose: relative path -> words the message must contain.
REFUSED: dict[str, tuple[str, ...]] = {
    # InferenceX-app's TPU manual sweep: its rows' tp counts TensorCores, not chips.
    "inferencex-manual-sweep/InferenceX-app_tpu-manual-sweep.json": (
        "an InferenceX-app manual sweep",
        "recognised but not read",
        "TensorCores, not chips",
    ),
    # aiperf cancelled the run before any of its 32 requests succeeded.
    "aiperf/agentic_kimik2.5_tp8_conc32_offloadlmcache_fp4_vllm_tp8-ep1-dpafalse_disagg-false"
    "_spec-none_conc32_b200-dgxc_05_profile_export_aiperf.json": (
        "was_cancelled: true",
        "before any request succeeded (32 failed)",
        NOTHING_MEASURED,
    ),
}
