"""Every real file in tests/fixtures/wild imports with its numbers intact, or is refused by name.

The folder a file sits in is the format it must sniff as. Checks compare the document with
the file's own fields (seconds -> ms by x1000, per-GPU -> totals by x GPUs), never with
numbers written into the test.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.workers.importers import wild_fourth
from workers.importers import Facts, ImportFailure, facts_from_arguments, import_file, sniff
from workers.importers.common import MissingFacts
from workers.importers.lm_eval import PROPORTIONS
from workers.results import Distribution, ResultDocument

WILD = Path(__file__).resolve().parents[2] / "fixtures" / "wild"
FILES = sorted(p for p in WILD.rglob("*") if p.is_file() and p.name != "SOURCES.md")


def _facts(
    accelerator: str,
    gpus: int | None,
    engine: str,
    weights: str,
    model: str | None = None,
    **scenario: int,
) -> Facts:
    deployment = {
        "accelerator": accelerator,
        "engine": {"name": engine},
        "quantization": {"weights": weights},
    }
    if gpus is not None:
        deployment["gpus"] = gpus
    return Facts.model_validate({"deployment": deployment, "model": model, "scenario": scenario})


# Facts a file cannot state, by file-name prefix. The aiperf exports sit in InferenceX run
# folders whose names state these (kept in the file names here); the token-position
# summaries' accelerator is not stated anywhere, so the one given is arbitrary. Checks are
# on measurements, which facts do not touch.
FACTS_BY_PREFIX: dict[str, Facts] = {
    "aiperf/agentic_kimik2.5": _facts("MI355X", 4, "vllm", "FP4"),
    "aiperf/agentic_glm5.1": _facts("MI355X", 2, "sglang", "FP4"),
    "aiperf/agentic_kimik2.7": _facts("MI355X", 4, "vllm", "FP4"),
    # aiperf's own plot fixtures (Qwen3-0.6B runs); the hardware is not stated anywhere.
    "aiperf/aiperf-plot-fixture": _facts("H100", 1, "vllm", "BF16"),
    # anud18/qwen36-vllm-aiperf-benchmark: its RESULTS_nvfp4.md runs nvidia/Qwen3.6-35B-A3B-NVFP4
    # on vLLM v0.24.0 on one RTX 5090 (the run folder's meta.json says node "5090").
    "aiperf/qwen36-vllm-aiperf-benchmark_nvfp4_5090": _facts("RTX 5090", 1, "vllm", "NVFP4"),
    # databloom/aiperf-lab-tests: GGUF models behind lab endpoints on port 8080; the hardware
    # and server are not stated anywhere (these are arbitrary but for the weights, which
    # the model names give). Checks are on measurements, which facts do not touch.
    "aiperf/aiperf-lab-tests_llama": _facts("L4", 1, "llama.cpp", "Q4_K_M"),
    "aiperf/aiperf-lab-tests_qwen3": _facts("L4", 1, "llama.cpp", "Q4_1"),
    # wellflat/k8s-dev's aiperf run against its gpt-oss-20b vLLM pod (GPU model not stated).
    # Its synthetic lengths have a spread: the scenario's are the measured means.
    "aiperf/wellflat-k8s-dev": _facts("A100", 1, "vllm", "MXFP4"),
    "inferencex-summary/glm5": _facts("H200", None, "vllm", "FP8"),
    "inferencex-summary/minimax": _facts("H200", None, "vllm", "FP8"),
    # ATOM MTP runs on MI355X, TP4 (InferenceX root files). The lengths are not given: the
    # files keep every request's lengths, whose means are the scenario's (the name's
    # isl8192_osl1024 is the top of the random range, not what was sent).
    "inferencex-benchmark-serving/atom": _facts("MI355X", 4, "atom", "FP8"),
    # datacrunch-research's H200 benchmarks (8x H200, sglang); model from the file names.
    "sglang-bench-serving/deepseek": _facts("H200", 8, "sglang", "FP8", model="deepseek-v3"),
    "sglang-bench-serving/llama_3_3_70b": _facts(
        "H200", 8, "sglang", "BF16", model="llama-3.3-70b"
    ),
    "sglang-bench-serving/llama_405b": _facts("H200", 8, "sglang", "FP8", model="llama-3.1-405b"),
    # TonyLi15/sglang-benchmark: Qwen2.5-3B-Instruct (BF16 on the hub; the weights' dtype is
    # not stated: the server ran --dtype auto) on GH200 nodes. server_info states the model,
    # sglang version and layout; the aggregated run's one GPU is stated (TP1). For the
    # prefill/decode runs the pools' GPUs are given: intra-node ran both servers on one GH200
    # (README: "MEM_FRACTION 0.45 ... running both on same GPU"), inter-node put prefill on a
    # GH200 and decode on another node's GPU (its scripts), which one accelerator cannot say;
    # 1 + 1 is the layout, not a GPU inventory. Checks are on what the files state.
    # shaamil101-etched/trtllm-benchmarks: its README runs Llama-3.1-70B-Instruct FP8 at TP8 on
    # 8x H100; the 0.16 text report states everything but the GPU.
    "trtllm-bench-log/shaamil101": Facts.model_validate({"deployment": {"accelerator": "H100"}}),
    "sglang-bench-serving/TonyLi15-sglang-benchmark_agg": Facts.model_validate(
        {"deployment": {"accelerator": "GH200", "quantization": {"weights": "BF16"}}}
    ),
    "sglang-bench-serving/TonyLi15-sglang-benchmark_pd": Facts.model_validate(
        {
            "deployment": {
                "accelerator": "GH200",
                "quantization": {"weights": "BF16"},
                "disaggregation": {"prefill_gpus": 1, "decode_gpus": 1},
            }
        }
    ),
    # MLPerf v4.1 submissions: the summary states no model, hardware, engine or prompt
    # length; the model and hardware are the submission folder's names, the engine and
    # weights are given for the test only (checks are on measurements, which facts do not
    # touch), and the input length is a placeholder.
    "mlperf-loadgen/mlcommons-v4.1_AMD": _facts(
        "MI300X", 8, "vllm", "FP8", model="llama-2-70b", input_tokens=1024
    ),
    "mlperf-loadgen/mlcommons-v4.1_NVIDIA": _facts(
        "B200", 1, "tensorrt-llm", "FP4", model="llama-2-70b", input_tokens=1024
    ),
    # kubernetes-sigs/inference-perf KubeCon NA 2025 demo: its manifests.yaml runs
    # vllm/vllm-openai:v0.11.0 serving Llama-3.1-8B-Instruct on one H100 (GKE
    # nvidia-h100-80gb). The workload (a ShareGPT-like mix) has no target lengths: the
    # scenario's are the measured means the reports state. Checks are on measurements.
    "inference-perf/kubecon-na-2025_vllm-eagle": Facts.model_validate(
        {
            **_facts(
                "H100",
                1,
                "vllm",
                "BF16",
                "meta-llama/Llama-3.1-8B-Instruct",
            ).as_tree(),  # fmt: skip
            "deployment": {
                "accelerator": "H100",
                "gpus": 1,
                "engine": {"name": "vllm"},
                "quantization": {"weights": "BF16"},
                "speculative": {"method": "eagle3", "draft_tokens": 4},
            },
        }
    ),
    "inference-perf/kubecon-na-2025_vllm-quantization": _facts(
        "H100",
        1,
        "vllm",
        "NF4",
        "meta-llama/Llama-3.1-8B-Instruct",
    ),  # fmt: skip  (--quantization bitsandbytes)
    "inference-perf/kubecon-na-2025_vllm": _facts(
        "H100",
        1,
        "vllm",
        "BF16",
        "meta-llama/Llama-3.1-8B-Instruct",
    ),  # fmt: skip
    # er0080/vllm-benchmarking's capture of `vllm bench sweep serve` (vLLM 0.25.1, OPT-125m):
    # the files state no hardware; these facts are arbitrary. Checks are on measurements,
    # which facts do not touch. The lengths are the totals over completed (they divide).
    "vllm-bench-serve/er0080-sweep": _facts("L4", 1, "vllm", "BF16"),
    # nerdalert/vllm-bench-automation: llm-d with 4 decode replicas on 4x L40S (the file's
    # --metadata says gpu=4xNVIDIA_L40S, input_len=1000, output_len=500). The input length
    # is stated by the totals (they divide by completed); the output, which varies, is given.
    "inferencex-benchmark-serving/vllm-bench-automation": _facts(
        "L40S", 4, "vllm", "BF16", output_tokens=500
    ),
    # LambdaLabsML/vllm-benchmark: one A100-80GB SXM, vLLM v0.5.4 image, TP1, ShareGPT
    # prompts. The weights' precision is not stated (BF16 is arbitrary); the lengths are
    # derived from the file's per-request counts, so none are given here.
    "vllm-benchmark-serving/lambdalabs_1xA100": _facts("A100", 1, "vllm", "BF16"),
    # danielkorat/guidellm-bench: vLLM 0.14.1 on Intel XPU (intel/vllm:0.14.1-xpu), TP4, FP8,
    # AIME prompts. The XPU model is not stated; the lengths are derived from the file's
    # measured prompt/output means; checks are on measurements.
    "guidellm/guidellm-bench": _facts("ARC-B60", 4, "vllm", "FP8"),
    # wellflat/k8s-dev: vllm/vllm-openai:gptoss, TP1, one GPU whose model is not stated
    # (the accelerator is arbitrary). The synthetic lengths have a spread (stddev 30), so the
    # scenario's lengths are the measured means the files state.
    "genai-perf/wellflat-k8s-dev": _facts("A100", 1, "vllm", "MXFP4", "openai/gpt-oss-20b"),
    # ray-project/llmperf-leaderboard: hosted endpoints (Anyscale, Bedrock, Lepton) whose
    # hardware is not stated anywhere, so these facts are arbitrary; the responses files
    # name no model (the paired summary's is given). Checks are on measurements.
    "llmperf/": _facts("H100", 1, "vllm", "BF16"),
    # philschmid/llmperf-bench: TGI 2.0.1 (the results folder and main.py's default image) on
    # one GPU of 24 GB (its configs); the GPU model and the weights are not stated, so these
    # two are arbitrary. Checks are on measurements, which facts do not touch.
    "llmperf-sweep/": _facts("A10G", 1, "tgi", "BF16"),
    "llmperf-responses/llmperf-leaderboard_anyscale_13b": _facts(
        "H100", 1, "vllm", "BF16", model="meta-llama/Llama-2-13b-chat-hf"
    ),
    "llmperf-responses/llmperf-leaderboard_bedrock_70b": _facts(
        "H100", 1, "vllm", "BF16", model="meta.llama2-70b-chat-v1"
    ),
    # lm-eval results: hardware and engine from each file's pretty_env_info and config.model.
    "lm-eval/african_nlp": _facts("L4", 1, "vllm", "BF16"),
    "lm-eval/nl2foam": _facts("H100", 8, "vllm", "BF16", model="nl2foam_sft_0"),
    "lm-eval/qwen3-8b": _facts("H100", 1, "hf", "BF16"),
}
FACTS_BY_PREFIX = {**wild_fourth.FACTS_BY_PREFIX, **FACTS_BY_PREFIX}
# Facts a file cannot state (only for formats whose files do not name them).
GIVEN: dict[str, Facts] = {
    "inferencex-benchmark-serving": Facts.model_validate(
        {
            "deployment": {
                "accelerator": "GB200",
                "engine": {"name": "trtllm"},
                "quantization": {"weights": "FP4"},
            },
            # No lengths: the totals over completed state them (2,621,440 / 2,560 = 1,024).
        }
    ),
}
SLOT = {"mean": "mean", "median": "p50", "std": "std", "p90": "p90", "p95": "p95",
        "p99": "p99", "p99.9": "p999"}  # fmt: skip
STAT = re.compile(
    r"^(mean|median|std|p90|p95|p99|p99\.9)_(ttft|tpot|itl|e2el|ttlt|e2e_latency)(_ms)?$"
)


def _close(a: float | None, b: float) -> bool:
    return a is not None and math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


def _check_latencies(doc_point: Any, row: dict[str, Any], unit_ms: float) -> int:
    """Every <stat>_<metric> in the file is in the document, in ms; returns how many."""
    checked = 0
    for key, value in row.items():
        match = STAT.match(key)
        if not match or value is None:
            continue
        stat, metric, _ = match.groups()
        ours = "e2el" if metric in ("ttlt", "e2e_latency") else metric
        dist: Distribution = getattr(doc_point.latency_ms, ours)
        assert getattr(dist, SLOT[stat]) == value * unit_ms, key
        checked += 1
    return checked


def _check_deployment(doc: ResultDocument, row: dict[str, Any]) -> None:
    dep = doc.deployment
    assert dep.accelerator == row["hw"].upper()
    assert dep.parallelism.tp == row["tp"] == dep.gpus
    assert dep.parallelism.ep == row["ep"]
    assert dep.parallelism.dp_attention == (str(row["dp_attention"]).lower() == "true")
    assert dep.quantization.weights == row["precision"].upper()
    assert dep.engine.name == row["framework"]
    assert doc.model.name == row["model"]
    spec = row.get("spec_decoding")
    if spec and spec != "none":
        assert dep.speculative is not None and dep.speculative.method == spec
    else:
        assert dep.speculative is None


def check_inferencex_agg(docs: list[ResultDocument], raw: Any) -> None:
    [doc] = docs
    point = doc.points[0]
    _check_deployment(doc, raw)
    assert point.concurrency == raw["conc"]
    gpus = doc.deployment.gpus
    assert _close(point.throughput.total_tok_s / gpus, raw["tput_per_gpu"])
    assert _close(point.throughput.output_tok_s / gpus, raw["output_tput_per_gpu"])
    assert _close(point.throughput.input_tok_s / gpus, raw["input_tput_per_gpu"])
    assert (doc.scenario.input_tokens, doc.scenario.output_tokens) == (raw["isl"], raw["osl"])
    assert _check_latencies(point, raw, 1000) >= 20
    assert (
        doc.environment.extra["statistics_as_written"]["intvty"]["median"] == (raw["median_intvty"])
    )


def check_inferencex_agentic(docs: list[ResultDocument], raw: Any) -> None:
    rows = raw if isinstance(raw, list) else [raw]
    assert len(docs) == len(rows)
    for doc, row in zip(docs, rows, strict=True):
        point = doc.points[0]
        _check_deployment(doc, row)
        assert point.concurrency == row.get("conc", row.get("users"))
        assert point.window_s == row["duration_seconds"]
        assert point.requests.total == row["num_requests_total"]
        assert point.requests.succeeded == row["num_requests_successful"]
        assert point.tokens.input == row["total_prompt_tokens"]
        assert point.tokens.output == row["total_generation_tokens"]
        assert point.throughput.input_tok_s == row["input_tput_tps"]
        assert point.throughput.output_tok_s == row["output_tput_tps"]
        assert point.throughput.total_tok_s == row["total_tput_tps"]
        assert point.prefix_cache_hit_rate == row["server_gpu_cache_hit_rate"]
        assert doc.scenario.input_tokens == round(row["mean_input_tokens"])
        assert _check_latencies(point, row, 1000) >= 12


def check_inferencex_summary(docs: list[ResultDocument], raw: Any) -> None:
    [doc] = docs
    point = doc.points[0]
    assert point.concurrency == raw["max_concurrency"]
    assert point.window_s == raw["duration"]
    assert point.requests.total == raw["num_prompts"]
    assert point.requests.succeeded == raw["completed"]
    assert point.throughput.requests_per_s == raw["request_throughput"]
    assert point.throughput.output_tok_s == raw["output_throughput"]
    assert point.tokens.input == raw["total_input_tokens"]
    assert _check_latencies(point, raw, 1000) >= 6
    assert doc.model.name == raw["model_id"]


AIPERF_SLOTS = {"avg": "mean", "std": "std", "min": "min", "max": "max", "p50": "p50",
                "p90": "p90", "p95": "p95", "p99": "p99"}  # fmt: skip
AIPERF_LATENCY = {"time_to_first_token": "ttft", "inter_token_latency": "tpot",
                  "inter_chunk_latency": "itl", "request_latency": "e2el",
                  "time_to_first_output_token": "ttfo"}  # fmt: skip


def check_aiperf(docs: list[ResultDocument], raw: Any) -> None:
    [doc] = docs
    point = doc.points[0]
    assert raw["request_latency"]["unit"] == "ms"
    checked = 0
    for name, ours in AIPERF_LATENCY.items():
        if name not in raw:
            continue
        dist = getattr(point.latency_ms, ours)
        for stat, slot in AIPERF_SLOTS.items():
            if stat in raw[name]:
                assert getattr(dist, slot) == raw[name][stat], (name, stat)
                checked += 1
        unslotted = doc.environment.extra["percentiles_without_slot"][name]
        assert unslotted["p75"] == raw[name]["p75"]
    assert checked >= 30
    assert point.window_s == raw["benchmark_duration"]["avg"]  # unit "sec"
    assert point.requests.succeeded == raw["request_count"]["avg"]
    assert point.throughput.requests_per_s == raw["request_throughput"]["avg"]
    if "total_usage_prompt_tokens" in raw:
        assert point.tokens.source == "usage"
        assert point.tokens.input == raw["total_usage_prompt_tokens"]["avg"]
        assert point.tokens.output == raw["total_usage_completion_tokens"]["avg"]
    else:  # older exports count with the tokenizer only
        assert point.tokens.source == "tokenizer"
        assert point.tokens.input == raw["total_isl"]["avg"]
        assert point.tokens.output == raw["total_osl"]["avg"]
    errored = (raw.get("error_request_count") or {}).get("avg", 0)
    assert point.requests.failed == errored
    assert point.requests.total == raw["request_count"]["avg"] + errored
    for item in raw.get("error_summary") or []:
        assert point.errors[item["error_details"]["type"]] == item["count"]
    config = raw["input_config"]
    if "loadgen" in config:
        assert point.concurrency == config["loadgen"]["concurrency"]
        assert doc.model.name == config["endpoint"]["model_names"][0]
        if raw.get("schema_version") == "1.0":
            check_aiperf_v10(doc, raw)
    else:  # schema 1.3: phases known by name, models.items, a file dataset
        check_aiperf_phases(doc, raw)
    if "scenario_lengths" in doc.environment.extra:  # a trace, a file or lengths with a spread
        _check_measured_lengths(doc, raw, point.requests.succeeded)
    else:  # fixed synthetic lengths, as the config states them
        prompt = raw["input_config"]["input"]["prompt"]
        assert doc.scenario.input_tokens == prompt["input_tokens"]["mean"]
    version = raw.get("aiperf_version")
    assert doc.environment.loadgen_version == (f"aiperf {version}" if version else None)


def check_aiperf_v10(doc: ResultDocument, raw: Any) -> None:
    point, config = doc.points[0], raw["input_config"]
    assert doc.scenario.arrival == "closed"
    assert doc.scenario.request_count == config["loadgen"]["request_count"]
    assert doc.scenario.dataset == config["input"]["custom_dataset_type"]
    # A file of prompts states no lengths: the scenario carries the means the run sent.
    assert doc.scenario.input_tokens == round(raw["input_sequence_length"]["avg"])
    assert doc.scenario.output_tokens == round(raw["output_sequence_length"]["avg"])
    for name, slot in (("output_token_throughput", "output_tok_s"),
                       ("total_token_throughput", "total_tok_s")):  # fmt: skip
        assert raw[name]["unit"] == "tokens/sec"
        assert getattr(point.throughput, slot) == raw[name]["avg"]
    assert point.throughput.input_tok_s is None  # not stated by the file
    per_user = raw["output_token_throughput_per_user"]
    for stat, slot in AIPERF_SLOTS.items():
        assert getattr(point.interactivity_tok_s_user, slot) == per_user[stat], stat
    aside = doc.environment.extra["metrics_without_slot"]
    for name in ("error_isl", "total_error_isl", "time_to_second_token"):
        assert aside[name] == {"avg": raw[name]["avg"], "unit": raw[name]["unit"]}
    assert doc.environment.extra["cli_command"] == config["cli_command"]
    assert doc.environment.loadgen_version == "aiperf 0.8.0"


def check_aiperf_phases(doc: ResultDocument, raw: Any) -> None:
    point, config = doc.points[0], raw["input_config"]
    [profiling] = [p for p in config["phases"] if p["name"] == "profiling"]
    warmups = [p for p in config["phases"] if p["name"] == "warmup"]
    assert doc.model.name == config["models"]["items"][0]["name"]
    assert doc.scenario.request_count == profiling["requests"]
    assert doc.scenario.warmup_requests == sum(p["requests"] for p in warmups)
    if profiling["type"] == "concurrency":
        assert doc.scenario.arrival == "closed"
        assert point.concurrency == profiling["concurrency"]
        assert point.request_rate is None
    else:  # poisson at a rate the run kept up with
        assert doc.scenario.arrival == "open"
        assert point.request_rate == profiling["rate"] == doc.environment.extra["requested_rate"]
        assert point.concurrency is None
    [dataset] = config["datasets"]
    assert doc.scenario.dataset == dataset["format"]
    # A file dataset states no lengths: the scenario carries the means the run sent.
    assert doc.scenario.input_tokens == round(raw["input_sequence_length"]["avg"])
    assert doc.scenario.output_tokens == round(raw["output_sequence_length"]["avg"])
    assert doc.scenario.length_spread is None
    for name, slot in (("output_token_throughput", "output_tok_s"),
                       ("total_token_throughput", "total_tok_s")):  # fmt: skip
        assert raw[name]["unit"] == "tokens/sec"
        assert getattr(point.throughput, slot) == raw[name]["avg"]
    per_user = raw["output_token_throughput_per_user"]
    for stat, slot in AIPERF_SLOTS.items():
        assert getattr(point.interactivity_tok_s_user, slot) == per_user[stat], stat
    assert point.requests.failed == 0 and not raw["error_summary"]
    aside = doc.environment.extra["metrics_without_slot"]
    assert aside["time_to_second_token"] == {
        "avg": raw["time_to_second_token"]["avg"],
        "unit": raw["time_to_second_token"]["unit"],
    }
    assert doc.environment.extra["cli_command"] == raw["run_info"]["cli_command"]
    assert doc.environment.extra["endpoint_type"] == config["endpoint"]["type"]
    assert doc.environment.extra["start_time"] == raw["start_time"]
    assert doc.environment.started_at is None  # the file's times state no offset
    assert point.prefix_cache_hit_rate is None  # the file does not state one


def check_benchmark_serving(docs: list[ResultDocument], raw: Any) -> None:
    # benchmark_serving.py --append-result writes one result per line: one run each.
    rows = raw if isinstance(raw, list) else [raw]
    assert len(docs) == len(rows)
    for doc, row in zip(docs, rows, strict=True):
        point = doc.points[0]
        assert point.concurrency == row["max_concurrency"]
        assert point.window_s == row["duration"]
        assert point.throughput.requests_per_s == row["request_throughput"]
        assert point.throughput.output_tok_s == row["output_throughput"]
        assert point.throughput.total_tok_s == row["total_token_throughput"]
        assert point.tokens.input == row["total_input_tokens"]
        assert point.tokens.output == row["total_output_tokens"]
        assert point.requests.succeeded == row["completed"]
        assert _check_latencies(point, row, 1) >= 12
        if "best_of" in row:
            assert doc.environment.extra["best_of"] == row["best_of"]
        rate = row["request_rate"]
        assert doc.environment.extra.get("requested_rate") == (None if rate == "inf" else rate)
        _check_derived_lengths(doc, row)
    assert len({doc.idempotency_key for doc in docs}) == len(docs)


def _check_derived_lengths(doc: ResultDocument, row: dict[str, Any]) -> None:
    """Lengths the facts leave open come from the file: the per-request lengths' means, or
    the totals over completed where they divide exactly; each is labelled as derived."""
    derived = doc.environment.extra.get("scenario_lengths") or {"means": {}}
    completed = row["completed"]
    for slot, total, lens in (
        ("input_tokens", "total_input_tokens", "input_lens"),
        ("output_tokens", "total_output_tokens", "output_lens"),
    ):
        if lens in row:
            mean = sum(row[lens]) / len(row[lens])
        elif row[total] % completed == 0:
            mean = row[total] // completed
        else:  # neither states it: the facts gave it, and nothing is labelled derived
            assert slot not in derived["means"]
            continue
        assert derived["means"][slot] == mean
        assert getattr(doc.scenario, slot) == round(mean)
    assert derived["means"]  # every file here states at least one length


def check_vllm_bench_serve(docs: list[ResultDocument], raw: Any) -> None:
    # A sweep's summary.json is an array of run results: one document each.
    rows = raw if isinstance(raw, list) else [raw]
    assert len(docs) == len(rows)
    for doc, row in zip(docs, rows, strict=True):
        point = doc.points[0]
        assert point.concurrency == row["max_concurrency"]
        assert point.window_s == row["duration"]
        assert point.throughput.requests_per_s == row["request_throughput"]
        assert point.throughput.output_tok_s == row["output_throughput"]
        assert point.throughput.total_tok_s == row["total_token_throughput"]
        assert point.tokens.input == row["total_input_tokens"]
        assert point.tokens.output == row["total_output_tokens"]
        assert (point.requests.succeeded, point.requests.failed) == (
            row["completed"],
            row["failed"],
        )
        assert _check_latencies(point, row, 1) == 16  # mean/median/std/p99 of 4 metrics
        assert doc.model.name == row["model_id"]
        # `vllm bench sweep` merges its run number and serve parameters into the result.
        sweep = doc.environment.extra["sweep_parameters"]
        assert (sweep["run_number"], sweep["max_num_seqs"]) == (
            row["run_number"],
            row["max_num_seqs"],
        )
        assert (doc.scenario.length_spread, doc.scenario.prefix_cache_hit_rate) == (None, None)
        _check_derived_lengths(doc, row)
    assert len({doc.idempotency_key for doc in docs}) == len(docs)


def check_vllm_benchmark_serving(docs: list[ResultDocument], raw: Any) -> None:
    # benchmark_serving.py of 2024: <stat>_latency_ms is each request's end-to-end time.
    [doc] = docs
    point = doc.points[0]
    assert doc.model.name == raw["model_id"]
    assert point.window_s == raw["duration"]
    assert point.concurrency is None and point.request_rate is None  # rate "inf", no cap
    assert doc.scenario.arrival == "closed" and doc.scenario.request_count == raw["num_prompts"]
    ok = [i for i, error in enumerate(raw["errors"]) if not error]
    assert (point.requests.total, point.requests.succeeded, point.requests.failed) == (
        raw["num_prompts"],
        raw["completed"],
        raw["num_prompts"] - raw["completed"],
    )
    assert len(ok) == raw["completed"]
    assert point.throughput.requests_per_s == raw["request_throughput"]
    assert point.throughput.input_tok_s == raw["input_throughput"]
    assert point.throughput.output_tok_s == raw["output_throughput"]
    assert point.throughput.total_tok_s is None  # not stated
    assert (point.tokens.input, point.tokens.output) == (
        raw["total_input_tokens"],
        raw["total_output_tokens"],
    )
    assert _check_latencies(point, raw, 1) == 12  # mean/median/std/p99 of ttft, tpot, itl
    for stat, slot in (("mean", "mean"), ("median", "p50"), ("std", "std"), ("p99", "p99")):
        assert getattr(point.latency_ms.e2el, slot) == raw[f"{stat}_latency_ms"], stat
    assert point.records is None  # the arrays have no start_times
    assert doc.environment.extra["records_omitted"]
    assert doc.environment.extra["best_of"] == raw["best_of"]
    # No target lengths in the file: derived from the measured counts, and labelled so.
    derived = doc.environment.extra["scenario_lengths"]
    mean_in = sum(raw["input_lens"][i] for i in ok) / len(ok)
    mean_out = sum(raw["output_lens"][i] for i in ok) / len(ok)
    assert derived["derived"] and derived["requests"] == len(ok)
    assert derived["means"] == {"input_tokens": mean_in, "output_tokens": mean_out}
    assert (doc.scenario.input_tokens, doc.scenario.output_tokens) == (
        round(mean_in),
        round(mean_out),
    )
    assert doc.scenario.length_spread is None and doc.scenario.dataset == "unstated"


def check_sglang(docs: list[ResultDocument], raw: Any) -> None:
    lines = raw if isinstance(raw, list) else [raw]
    seen = []
    for doc in docs:
        for point, extra in zip(doc.points, doc.environment.extra["lines"], strict=True):
            row = lines[extra["line"] - 1]
            seen.append(extra["line"])
            assert point.window_s == row["duration"]
            assert point.requests.succeeded == row["completed"]
            assert point.tokens.input == row["total_input_tokens"]
            assert point.tokens.output == row["total_output_tokens"]
            assert point.throughput.output_tok_s == row["output_throughput"]
            rate = row["request_rate"]
            assert point.request_rate == (rate if math.isfinite(rate) else None)
            assert _check_latencies(point, row, 1) >= 2
            assert doc.scenario.dataset == row["dataset_name"]
            if row.get("server_info"):
                _check_sglang_server(doc, row["server_info"])
    assert sorted(seen) == list(range(1, len(lines) + 1))  # every line imported once


def _check_sglang_server(doc: ResultDocument, info: dict[str, Any]) -> None:
    """What sglang's server_info states is stored as the file's facts, never asked."""
    dep = doc.deployment
    assert dep.engine.name == "sglang"
    if "prefill" not in info:  # one server: its arguments
        assert doc.model.name == info["served_model_name"]
        assert dep.engine.version == info["version"]
        assert (dep.parallelism.tp, dep.parallelism.pp, dep.parallelism.ep) == (
            info["tp_size"], info["pp_size"], info["ep_size"])  # fmt: skip
        assert dep.parallelism.dp_attention == info["enable_dp_attention"]
        assert info["dp_size"] == 1 and dep.gpus == info["tp_size"] * info["pp_size"]
        assert dep.multinode == (info["nnodes"] > 1)
        assert dep.disaggregation is None
        return
    # A prefill/decode router's answer: a disaggregated deployment, each pool as its
    # servers state it; the pools' GPUs came from the facts.
    assert dep.disaggregation is not None
    for role in ("prefill", "decode"):
        [server] = info[role]  # these routers listed one server per role
        assert server["disaggregation_mode"] == role
        assert doc.model.name == server["served_model_name"]
        pool = getattr(dep.disaggregation, role)
        assert (pool.tp, pool.ep, pool.dp_attention) == (
            server["tp_size"], server["ep_size"], server["enable_dp_attention"])  # fmt: skip
        assert pool.workers is None  # a router's list is not always every worker
    versions = {info["prefill"][0]["version"], info["decode"][0]["version"]}
    assert dep.engine.version == (versions.pop() if len(versions) == 1 else None)
    assert dep.gpus == dep.disaggregation.prefill_gpus + dep.disaggregation.decode_gpus


def check_inferencex_agentic_v2(docs: list[ResultDocument], raw: Any) -> None:
    [doc] = docs
    point = doc.points[0]
    metrics = raw["request_metrics"]
    assert doc.deployment.accelerator == raw["hw"].removeprefix("cluster:").split("-")[0].upper()
    assert doc.deployment.gpus == raw["tp"] * raw.get("pp", 1)
    assert doc.model.name == raw["model"]
    assert point.concurrency == raw["conc"]
    assert point.window_s == metrics["throughput"]["duration_seconds"]
    assert point.throughput.total_tok_s == metrics["throughput"]["total"]["tokens_per_second"]
    assert point.throughput.output_tok_s == metrics["throughput"]["output"]["tokens_per_second"]
    assert point.requests.succeeded == raw["num_requests_successful"]
    assert point.prefix_cache_hit_rate == raw["server_metrics"]["cache"]["gpu_cache_hit_rate"]
    checked = 0
    for name, stats in metrics["latency"].items():
        if name == "intvty":
            continue
        dist = getattr(point.latency_ms, "e2el" if name == "e2el" else name)
        for stat, slot in (("mean", "mean"), ("p50", "p50"), ("p90", "p90"), ("std", "std")):
            assert getattr(dist, slot) == stats[stat] * 1000, (name, stat)
            checked += 1
    assert checked == 16


INFERENCE_PERF_LATENCY = {"time_to_first_token": "ttft", "time_per_output_token": "tpot",
                          "request_latency": "e2el"}  # fmt: skip
INFERENCE_PERF_SLOTS = {"mean": "mean", "min": "min", "median": "p50", "p90": "p90",
                        "p95": "p95", "p99": "p99", "p99.9": "p999", "max": "max"}  # fmt: skip


def check_inference_perf(docs: list[ResultDocument], raw: Any) -> None:
    [doc] = docs
    point = doc.points[0]
    successes, load = raw["successes"], raw["load_summary"]
    assert point.requests.succeeded == successes["count"]
    derived = doc.environment.extra["scenario_lengths"]
    assert derived["requests"] == successes["count"]
    for slot, name in (("input_tokens", "prompt_len"), ("output_tokens", "output_len")):
        assert derived["means"][slot] == successes[name]["mean"]
        assert getattr(doc.scenario, slot) == round(successes[name]["mean"])
    assert point.requests.failed == raw["failures"]["count"]
    throughput = successes["throughput"]
    assert point.throughput.requests_per_s == throughput["requests_per_sec"]
    assert point.throughput.input_tok_s == throughput["input_tokens_per_sec"]
    assert point.throughput.output_tok_s == throughput["output_tokens_per_sec"]
    assert point.throughput.total_tok_s == throughput["total_tokens_per_sec"]
    assert point.request_rate == load.get("requested_rate")
    checked = 0
    for name, ours in INFERENCE_PERF_LATENCY.items():
        dist = getattr(point.latency_ms, ours)
        for stat, slot in INFERENCE_PERF_SLOTS.items():
            if stat in successes["latency"][name]:
                assert getattr(dist, slot) == successes["latency"][name][stat] * 1000, (name, stat)
                checked += 1
    assert checked >= 15
    # Nothing in the report states a length spread or a prefix-cache target.
    assert (doc.scenario.length_spread, doc.scenario.prefix_cache_hit_rate) == (None, None)


def check_lm_eval(docs: list[ResultDocument], raw: Any) -> None:
    [doc] = docs
    groups = {g for g, subtasks in raw.get("group_subtasks", {}).items() if subtasks}
    stored = {(a.task, a.metric): a for a in doc.accuracy}
    expected = 0
    for task, row in raw["results"].items():
        if task in groups:  # an aggregate of subtasks stored on their own
            assert not any(t == task for t, _ in stored)
            continue
        effective = raw["n-samples"][task]["effective"]
        for key, value in row.items():
            if key in ("alias", "name", "sample_len") or "_stderr," in key:
                continue
            result = stored[(task, key)]
            expected += 1
            assert result.score == value
            stderr = row.get(key.replace(",", "_stderr,", 1))
            assert result.stderr == (stderr if isinstance(stderr, float) else None)
            if key.split(",")[0] in PROPORTIONS:
                assert (result.kind, result.n) == ("proportion", effective)
            else:  # f1, bleu, rouge, judge scores: no n, so no binomial interval
                assert (result.kind, result.n) == ("score", None)
    assert len(stored) == expected
    assert doc.environment.extra["lm_eval_version"] == raw["lm_eval_version"]
    # The sample counts are kept for every task, scores (no n) included.
    assert doc.environment.extra["n_samples"] == {
        task: raw["n-samples"][task] for task in raw["results"] if task not in groups
    }


def check_guidellm(docs: list[ResultDocument], raw: Any) -> None:
    [doc] = docs
    assert len(doc.points) == len(raw["benchmarks"])
    for point, bench in zip(doc.points, raw["benchmarks"], strict=True):
        metrics = {name: m.get("successful") for name, m in bench["metrics"].items()}
        strategy = bench["config"]["strategy"]
        assert point.label == strategy["type_"]
        assert point.concurrency == strategy["max_concurrency"]  # synchronous 1, concurrent N
        assert point.window_s == bench["duration"]
        assert point.requests.succeeded == bench["metrics"]["request_totals"]["successful"]
        assert point.throughput.requests_per_s == metrics["requests_per_second"]["mean"]
        assert point.throughput.output_tok_s == metrics["output_tokens_per_second"]["mean"]
        # total_sum is a float sum of whole counts (1748.9999999999998 for 1749).
        assert point.tokens.input == round(metrics["prompt_token_count"]["total_sum"])
        assert point.tokens.output == round(metrics["output_token_count"]["total_sum"])
        for name, slot, factor in (
            ("time_to_first_token_ms", "ttft", 1),
            ("request_latency", "e2el", 1000),  # seconds
        ):
            dist, summary = getattr(point.latency_ms, slot), metrics[name]
            assert (dist.mean, dist.std) == (summary["mean"] * factor, summary["std_dev"] * factor)
            assert (dist.min, dist.max) == (summary["min"] * factor, summary["max"] * factor)
            for p in ("p50", "p90", "p95", "p99", "p999"):
                assert getattr(dist, p) == summary["percentiles"][p] * factor, (name, p)
        # guidellm's token-weighted TPOT/ITL are kept aside, not mapped (see the importer).
        assert point.latency_ms.tpot is None and point.latency_ms.itl is None
    # A file of prompts states no target lengths: the measured means over every benchmark's
    # successful requests are the scenario's, labelled as derived.
    ok = [b["metrics"] for b in raw["benchmarks"]]
    count = sum(m["prompt_token_count"]["successful"]["count"] for m in ok)
    derived = doc.environment.extra["scenario_lengths"]
    assert derived["requests"] == count
    for slot, name in (("input_tokens", "prompt_token_count"),
                       ("output_tokens", "output_token_count")):  # fmt: skip
        mean = sum(m[name]["successful"]["total_sum"] for m in ok) / count
        assert derived["means"][slot] == mean
        assert getattr(doc.scenario, slot) == round(mean)


GENAI_PERF_LATENCY = {"time_to_first_token": "ttft", "request_latency": "e2el",
                      "inter_token_latency": "tpot"}  # fmt: skip


def check_genai_perf(docs: list[ResultDocument], raw: Any) -> None:
    [doc] = docs
    point = doc.points[0]
    assert raw["request_latency"]["unit"] == "ms"
    checked = 0
    for name, slot in GENAI_PERF_LATENCY.items():
        dist = getattr(point.latency_ms, slot)
        for stat, ours in AIPERF_SLOTS.items():
            assert getattr(dist, ours) == raw[name][stat], (name, stat)
            checked += 1
        assert doc.environment.extra["percentiles_without_slot"][name]["p25"] == raw[name]["p25"]
    assert checked == 24
    assert point.throughput.requests_per_s == raw["request_throughput"]["avg"]
    assert point.throughput.output_tok_s == raw["output_token_throughput"]["avg"]
    assert point.requests.succeeded == raw["request_count"]["avg"]
    assert point.requests.failed is None  # not stated
    assert point.window_s is None and point.tokens is None  # not stated either
    config = raw["input_config"]
    stimulus = config.get("perf_analyzer", {}).get("stimulus", config)
    assert point.concurrency == stimulus["concurrency"]
    assert doc.model.name == (config.get("model_names") or config.get("model"))[0]
    assert doc.scenario.dataset == "random"  # genai-perf's "synthetic"
    _check_measured_lengths(doc, raw, point.requests.succeeded)


def _check_measured_lengths(doc: ResultDocument, raw: Any, requests: int) -> None:
    """Lengths drawn with a spread: the scenario carries the measured means, labelled."""
    derived = doc.environment.extra["scenario_lengths"]
    assert derived["requests"] == requests
    for slot, name in (("input_tokens", "input_sequence_length"),
                       ("output_tokens", "output_sequence_length")):  # fmt: skip
        assert derived["means"][slot] == raw[name]["avg"]
        assert getattr(doc.scenario, slot) == round(raw[name]["avg"])


LLMPERF_SLOTS = {"mean": "mean", "stddev": "std", "min": "min", "max": "max",
                 "quantiles_p50": "p50", "quantiles_p90": "p90", "quantiles_p95": "p95",
                 "quantiles_p99": "p99"}  # fmt: skip
LLMPERF_LATENCY = {"ttft_s": "ttft", "end_to_end_latency_s": "e2el"}


def check_llmperf(docs: list[ResultDocument], raw: Any) -> None:
    [doc] = docs
    assert doc.model.name == raw["model"]
    _check_llmperf_point(doc, doc.points[0], raw, doc.environment.extra)


def check_llmperf_sweep(docs: list[ResultDocument], raw: Any) -> None:
    # Summaries keyed by concurrency: one run whose points are the keys, in file order.
    [doc] = docs
    assert [str(p.concurrency) for p in doc.points] == list(raw)
    extras = doc.environment.extra["summaries"]
    assert [e["key"] for e in extras] == list(raw)
    for point, extra, summary in zip(doc.points, extras, raw.values(), strict=True):
        assert doc.model.name == summary["model"]
        _check_llmperf_point(doc, point, summary, extra)
    errors = sum(s["results_number_errors"] for s in raw.values())
    assert doc.status == ("partial" if errors else "succeeded")


def _check_llmperf_point(doc: ResultDocument, point: Any, raw: Any, extra: dict) -> None:
    assert point.concurrency == raw["num_concurrent_requests"]
    assert (point.requests.total, point.requests.succeeded, point.requests.failed) == (
        raw["results_num_requests_started"],
        raw["results_num_completed_requests"],
        raw["results_number_errors"],
    )
    assert sum(point.errors.values()) == raw["results_number_errors"]
    assert point.throughput.output_tok_s == raw["results_mean_output_throughput_token_per_s"]
    # Completed requests per MINUTE in the file; per second in ours.
    assert point.throughput.requests_per_s == raw["results_num_completed_requests_per_min"] / 60
    checked = 0
    for name, slot in LLMPERF_LATENCY.items():
        dist = getattr(point.latency_ms, slot)
        for stat, ours in LLMPERF_SLOTS.items():
            assert getattr(dist, ours) == raw[f"results_{name}_{stat}"] * 1000, (name, stat)
            checked += 1
        unslotted = extra["latency_stats_without_slot_s"][name]
        assert unslotted["quantiles_p25"] == raw[f"results_{name}_quantiles_p25"]
    assert checked == 16
    # llmperf's inter-token latency is end-to-end time per chunk (TTFT included): not TPOT.
    assert point.latency_ms.tpot is None and point.latency_ms.itl is None
    assert point.tokens is None  # the summary states means only, no totals
    assert (doc.scenario.input_tokens, doc.scenario.output_tokens) == (
        raw["mean_input_tokens"],
        raw["mean_output_tokens"],
    )
    spread = 0.0 if raw["stddev_input_tokens"] == raw["stddev_output_tokens"] == 0 else None
    assert doc.scenario.length_spread == spread


def check_llmperf_responses(docs: list[ResultDocument], raw: Any) -> None:
    [doc] = docs
    point = doc.points[0]
    ok = [r for r in raw if r["error_code"] is None]
    assert (point.requests.total, point.requests.succeeded) == (len(raw), len(ok))
    assert point.requests.failed == len(raw) - len(ok) == sum(point.errors.values())
    assert point.tokens.input == sum(r["number_input_tokens"] for r in ok)
    assert point.tokens.output == sum(r["number_output_tokens"] for r in ok)
    assert point.tokens.source == "tokenizer"
    assert point.window_s is None and point.concurrency is None and point.records is None
    # The same run's summary (llmperf's own statistics, pandas linear quantiles) agrees
    # with the distributions computed from the responses.
    summary = json.loads((WILD / "llmperf" / raw_summary_name(doc.source.file_name)).read_text())
    for name, slot in LLMPERF_LATENCY.items():
        dist = getattr(point.latency_ms, slot)
        assert dist.method.startswith("linear, computed by inferboard")
        values = [r[name] * 1000 for r in ok]
        assert (dist.min, dist.max) == (min(values), max(values))
        for stat, ours in LLMPERF_SLOTS.items():
            if stat != "stddev":  # llmperf's is the sample std, ours the population's
                expected = summary[f"results_{name}_{stat}"] * 1000
                assert math.isclose(getattr(dist, ours), expected, rel_tol=1e-9), (name, stat)
    assert summary["results_num_completed_requests"] == len(ok)
    # No target lengths in the file: derived from the measured counts, and labelled so.
    derived = doc.environment.extra["scenario_lengths"]
    assert derived["derived"] and derived["requests"] == len(ok)
    assert doc.scenario.input_tokens == round(sum(r["number_input_tokens"] for r in ok) / len(ok))
    assert doc.scenario.output_tokens == round(sum(r["number_output_tokens"] for r in ok) / len(ok))
    assert doc.scenario.length_spread is None


MLPERF_DISTRIBUTIONS = {
    "latency": "e2el",
    "first token latency": "ttft",
    "time to output token": "tpot",
}
MLPERF_SLOTS = {"50.00": "p50", "90.00": "p90", "95.00": "p95", "99.00": "p99", "99.90": "p999"}


def check_mlperf_loadgen(docs: list[ResultDocument], raw: Any) -> None:
    # Every figure of the summary, read off its lines here independently of the reader.
    lines = dict(
        (key.strip().lower(), value.strip())
        for key, _, value in (line.partition(":") for line in raw.splitlines() if ":" in line)
    )
    [doc] = docs
    [point] = doc.points
    assert point.request_rate == float(lines["target_qps"])
    assert point.throughput.requests_per_s == float(lines["completed samples per second"])
    assert point.throughput.output_tok_s == float(lines["completed tokens per second"])
    checked = 0
    for name, slot in MLPERF_DISTRIBUTIONS.items():
        dist = getattr(point.latency_ms, slot)
        for word, ours in (("min", "min"), ("max", "max"), ("mean", "mean")):
            assert getattr(dist, ours) == float(lines[f"{word} {name} (ns)"]) / 1e6, (name, word)
            checked += 1
        for label, ours in MLPERF_SLOTS.items():
            expected = float(lines[f"{label} percentile {name} (ns)"]) / 1e6
            assert getattr(dist, ours) == expected, (name, label)
            checked += 1
        kept = doc.environment.extra["not_mapped"][f"p97 {name} (ms)"]
        assert kept == float(lines[f"97.00 percentile {name} (ns)"]) / 1e6
    assert checked == 24
    bounds = {(b.metric, b.percentile, b.limit) for b in doc.scenario.slo.bounds}
    assert bounds == {
        ("ttft", "p99", float(lines["ttft_latency (ns)"]) / 1e6),
        ("tpot", "p99", float(lines["tpot_latency (ns)"]) / 1e6),
    }
    assert doc.scenario.arrival == "open"
    mean_output = float(lines["completed tokens per second"]) / float(
        lines["completed samples per second"]
    )
    assert doc.scenario.output_tokens == round(mean_output)
    assert doc.environment.extra["scenario_lengths"]["means"]["output_tokens"] == mean_output
    assert doc.environment.extra["mlperf"]["Result is"] == lines["result is"]
    assert doc.status == "succeeded"


TRTLLM_SLOTS = {"minimum": "min", "p50": "p50", "p90": "p90", "p95": "p95", "p99": "p99",
                "maximum": "max", "average": "mean"}  # fmt: skip


def check_trtllm_bench(docs: list[ResultDocument], raw: Any) -> None:
    [doc] = docs
    [point] = doc.points
    engine, world, perf = raw["engine"], raw["world_info"], raw["performance"]
    streaming, requests = raw["streaming_metrics"], raw["request_info"]
    # The report states the whole deployment: nothing is asked.
    assert doc.model.name == engine["model"]
    assert doc.deployment.engine.name == "trtllm"
    assert doc.deployment.engine.version == engine["version"]
    assert doc.deployment.gpus == world["world_size"]
    parallelism = doc.deployment.parallelism
    assert (parallelism.tp, parallelism.pp, parallelism.ep) == (
        world["tp_size"], world["pp_size"], world["ep_size"])  # fmt: skip
    assert raw["machine"]["name"].endswith(doc.deployment.accelerator)
    weights = doc.deployment.quantization.weights
    if engine["quantization"] is None:  # an unquantized checkpoint: weights in its dtype
        assert (engine["dtype"], weights) == ("bfloat16", "BF16")
        assert doc.environment.extra["weights_from"]
    else:
        assert weights == engine["quantization"]
    assert doc.deployment.quantization.kv_cache == engine["kv_cache_dtype"]
    assert doc.environment.loadgen_version == f"trtllm-bench {engine['version']}"
    # Throughputs over the window (first start to last end), as stated.
    assert point.window_s == perf["total_latency_ms"] / 1000
    assert point.throughput.requests_per_s == perf["request_throughput_req_s"]
    assert point.throughput.output_tok_s == perf["system_output_throughput_tok_s"]
    assert point.throughput.total_tok_s == perf["system_total_throughput_tok_s"]
    assert point.throughput.input_tok_s is None  # not stated
    checked = 0
    for dist, stats in (
        (point.latency_ms.e2el, perf["request_latency_percentiles_ms"]),
        (point.latency_ms.ttft, streaming["ttft_percentiles"]),
        (point.latency_ms.tpot, streaming["tpot_percentiles"]),
        (point.interactivity_tok_s_user, streaming["gen_tps_percentiles"]),
    ):
        for theirs, ours in TRTLLM_SLOTS.items():
            assert getattr(dist, ours) == stats[theirs], (theirs, ours)
            checked += 1
        assert dist.method == f"reported by trtllm-bench {engine['version']}"
    assert checked == 28
    assert point.latency_ms.ttft.mean == streaming["avg_ttft_ms"]
    assert point.latency_ms.tpot.mean == streaming["avg_tpot_ms"]
    assert point.latency_ms.e2el.mean == perf["avg_request_latency_ms"]
    kept = doc.environment.extra["trtllm_bench"]
    assert kept["per_request_means"]["output_throughput_per_user_tok_s"] == (
        perf["output_throughput_per_user_tok_s"])  # fmt: skip
    assert kept["per_request_means"]["output_throughput_per_gpu_tok_s"] == (
        perf["output_throughput_per_gpu_tok_s"])  # fmt: skip
    assert kept["request_info"]["avg_num_concurrent_requests"] == (
        requests["avg_num_concurrent_requests"])  # fmt: skip
    assert point.concurrency is None  # a measured mean, not the cap: kept aside
    assert point.requests is None  # failures are not counted apart from successes
    # The dataset asked every request for the same lengths, which the run measured.
    dataset = raw["dataset"]
    assert doc.scenario.input_tokens == dataset["isl_stats"]["minimum"] == dataset["isl_stats"][
        "maximum"] == requests["avg_input_length"]  # fmt: skip
    assert doc.scenario.output_tokens == dataset["osl_stats"]["minimum"] == dataset["osl_stats"][
        "maximum"] == requests["avg_output_length"]  # fmt: skip
    assert doc.scenario.length_spread == 0.0
    assert doc.scenario.request_count == requests["num_requests"]
    assert "scenario_lengths" not in doc.environment.extra  # stated, not derived
    assert doc.status == "succeeded"


def check_trtllm_bench_log(docs: list[ResultDocument], raw: Any) -> None:
    # The report's "label: value" lines, read here independently of the reader.
    lines = dict(
        (label.strip(), value.strip())
        for label, _, value in (line.partition(":") for line in raw.splitlines())
        if value.strip()
    )
    [doc] = docs
    [point] = doc.points
    assert doc.model.name == lines["Model"]
    assert doc.deployment.engine.version == lines["TensorRT-LLM Version"]
    assert doc.deployment.quantization.weights == lines["Quantization"]
    assert doc.deployment.quantization.kv_cache == lines["KV Cache Dtype"]
    tp, pp = int(lines["TP Size"]), int(lines["PP Size"])
    assert (doc.deployment.parallelism.tp, doc.deployment.parallelism.pp) == (tp, pp)
    assert doc.deployment.gpus == tp * pp
    # 0.16's "Token Throughput" is output tokens over the total latency (reporting.py).
    assert point.throughput.output_tok_s == float(lines["Token Throughput (tokens/sec)"])
    assert point.throughput.requests_per_s == float(lines["Request Throughput (req/sec)"])
    assert point.window_s == float(lines["Total Latency (ms)"]) / 1000
    assert doc.scenario.request_count == int(lines["Number of requests"])
    means = doc.environment.extra["scenario_lengths"]["means"]
    assert means["input_tokens"] == float(lines["Average Input Length (tokens)"])
    assert means["output_tokens"] == float(lines["Average Output Length (tokens)"])
    assert doc.scenario.input_tokens == round(means["input_tokens"])
    assert doc.scenario.output_tokens == round(means["output_tokens"])
    assert doc.environment.extra["trtllm_bench_report"]["issue_rate"] == lines[
        "Issue Rate (req/sec)"]  # fmt: skip
    assert point.requests is None  # failures are not reported apart


def raw_summary_name(responses_name: str) -> str:
    return responses_name.replace("_individual_responses.json", "_summary.json")


CHECKS: dict[str, Callable[[list[ResultDocument], Any], None]] = {
    "llmperf": check_llmperf,
    "llmperf-responses": check_llmperf_responses,
    "llmperf-sweep": check_llmperf_sweep,
    "genai-perf": check_genai_perf,
    "guidellm": lambda docs, raw: (
        wild_fourth.check_guidellm_v2(docs, raw)
        if raw["metadata"]["version"] == 2
        else check_guidellm(docs, raw)
    ),
    "vllm-bench-serve": check_vllm_bench_serve,
    "vllm-benchmark-serving": check_vllm_benchmark_serving,
    "lm-eval": check_lm_eval,
    "inference-perf": check_inference_perf,
    "inferencex-agg": check_inferencex_agg,
    "inferencex-agentic": check_inferencex_agentic,
    "inferencex-benchmark-serving": check_benchmark_serving,
    "inferencex-summary": check_inferencex_summary,
    "aiperf": check_aiperf,
    "sglang-bench-serving": check_sglang,
    "inferencex-agentic-v2": check_inferencex_agentic_v2,
    "mlperf-loadgen": check_mlperf_loadgen,
    "trtllm-bench": check_trtllm_bench,
    "trtllm-bench-log": check_trtllm_bench_log,
    **wild_fourth.CHECKS,
}
# Files refused on purpose: relative path -> words the message must contain.
REFUSED: dict[str, tuple[str, ...]] = {
    # wellflat/k8s-dev's lighteval output: it has lm-eval's "results" and "versions" keys.
    "lm-eval/wellflat-k8s-dev_lighteval_results_2025-10-24T08-49-35.599065.json": (
        "lighteval",
        "lm-evaluation-harness 0.4.x",
    ),
    # lm-eval's own 2021 test data: results as written before 0.4 (no filters, no counts).
    "lm-eval/lm-eval-0.3-testdata_arc_challenge-v0-res.json": ("0.3 or earlier", "0.4.x"),
    "mlperf-loadgen/thien-lm-MlPerfLogExample_offline_mlperf_log_summary.txt": (
        "MLPerf LoadGen mlperf_log_summary.txt, scenario Offline",
        "recognised but not read",
    ),
    "mlperf-loadgen/sgrad20Delft-inference_singlestream_mlperf_log_summary.txt": (
        "MLPerf LoadGen mlperf_log_summary.txt, scenario SingleStream",
        "recognised but not read",
    ),
    # aiperf's CSV exports of two runs whose JSON exports are in aiperf/: refused by name,
    # pointing at the JSON (test_refusals_by_name checks they are the same run).
    "aiperf-csv/qwen36-vllm-aiperf-benchmark_nvfp4_5090_agent_c16_profile_export_aiperf.csv": (
        "aiperf's CSV export",
        "recognised but not read",
        "profile_export_aiperf.json",
    ),
    "aiperf-csv/aiperf-lab-tests_llama-3.2-3b-instruct-gguf_q4_k_m_concurrency1_profile_export"
    "_aiperf.csv": ("aiperf's CSV export", "recognised but not read", "profile_export_aiperf.json"),
    **{
        f"inferencex-runner/{name}": ("InferenceX runner's", "recognised but not read", "agg_")
        for name in (
            "agentic_dsr1_tp4_bs16_offloadoff_fp4_vllm_tp4-ep4-dpafalse_disagg-false_spec-none"
            "_conc16_b200-dgxc-slurm_5_workload_distribution_summary.txt",
            "agentic_dsr1_tp4_bs1_offloadon_fp4_vllm_tp4-ep4-dpafalse_disagg-false_spec-none"
            "_conc1_b200-nb_0_workload_distribution_summary.txt",
            "agentic_dsr1_tp8_bs12_offloadon_fp4_vllm_tp8-ep8-dpafalse_disagg-false_spec-none"
            "_conc12_b200-dgxc-slurm_5_metrics_server_metrics.csv",
            "agentic_dsr1_tp8_bs16_offloadoff_fp4_vllm_tp8-ep8-dpafalse_disagg-false_spec-none"
            "_conc16_b200-dgxc-slurm_2_metrics_server_metrics.csv",
        )
    },
    # framework and precision are empty strings in this file: the facts must say them.
    "inferencex-agentic/results_0601_results_bmk_2_agg_bmk.json": (
        "item 0",
        "deployment.engine.name",
        "deployment.quantization.weights",
    ),
    **wild_fourth.REFUSED,
}


def facts_for(path: Path) -> Facts | None:
    relative = str(path.relative_to(WILD))
    return next(
        (f for prefix, f in FACTS_BY_PREFIX.items() if relative.startswith(prefix)),
        GIVEN.get(path.parent.name),
    )


def _raw(path: Path) -> Any:
    text = path.read_text()
    if path.suffix == ".txt":
        return text  # MLPerf's summary: lines of "key : value"
    try:
        return json.loads(text, parse_constant=float)
    except ValueError:
        return [json.loads(line, parse_constant=float) for line in text.splitlines() if line]


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(WILD)))
def test_every_wild_file_imports_with_its_numbers_or_is_refused_by_name(path):
    relative = str(path.relative_to(WILD))
    fmt = path.parent.name
    facts = facts_for(path)
    if relative in REFUSED:
        with pytest.raises(ImportFailure) as refused:
            import_file(path.read_bytes(), path.name, facts=facts)
        for word in REFUSED[relative]:
            assert word in str(refused.value)
        return
    assert sniff(path.read_bytes(), path.name) == fmt
    docs = import_file(path.read_bytes(), path.name, facts=facts)
    CHECKS[fmt](docs, _raw(path))


def test_the_corpus_lists_every_file_in_sources():
    sources = (WILD / "SOURCES.md").read_text()
    missing = [str(p.relative_to(WILD)) for p in FILES if str(p.relative_to(WILD)) not in sources]
    assert not missing


# A placeholder value for each fact a refusal may name, given back as the flag the refusal
# names, so the second try shows the one refusal asked for everything.
_GIVEN_FOR = {
    "model.name": ("fact_model", "refusal-named-model"),
    "deployment.accelerator": ("accelerator", "H100"),
    "deployment.gpus": ("gpus", "1"),
    "deployment.engine.name": ("engine", "vllm"),
    "deployment.quantization.weights": ("weights", "BF16"),
    "scenario.input_tokens": ("input_tokens", 1024),
    "scenario.output_tokens": ("output_tokens", 128),
    "deployment.speculative.method": ("spec_method", "mtp"),
    "deployment.disaggregation.prefill_gpus": ("prefill_gpus", 1),
    "deployment.disaggregation.decode_gpus": ("decode_gpus", 1),
}


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(WILD)))
def test_each_file_imports_with_the_facts_of_one_refusal(path: Path):
    data = path.read_bytes()
    try:
        import_file(data, path.name, facts=Facts())
        return  # the file states every fact itself
    except MissingFacts as refusal:
        missing = refusal.missing
    except ImportFailure as refusal:
        # Not a missing fact: the format is recognised and not read, or the file only goes
        # with another; either way the refusal says so by name, never "cannot tell".
        message = str(refusal)
        assert any(
            words in message
            for words in (
                "which we do not read",
                "recognised but not read",
                "with --records",
                wild_fourth.NOTHING_MEASURED,
            )
        ), message
        return
    assert missing
    given = facts_from_arguments(dict(_GIVEN_FOR[name] for name in missing))
    docs = import_file(data, path.name, facts=given)
    assert docs
