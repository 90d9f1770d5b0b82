"""TensorRT-LLM `trtllm-bench throughput|latency --report_json` reports (TensorRT-LLM 0.2x-1.x).

The report is ReportUtility.get_statistics_dict() of tensorrt_llm/bench/dataclasses/
reporting.py, with the statistics of bench/dataclasses/statistics.py. It states:

- `engine`: the model (a Hugging Face name), TensorRT-LLM `version`, `backend` (TRT or
  Pytorch), `dtype` (the model's) and `quantization` / `kv_cache_dtype` (the checkpoint's
  quant_algo and kv_cache_quant_algo; null means not quantized, so the weights are `dtype`);
- `machine`: the first GPU's name as CUDA reports it (null when it could not be queried);
- `world_info`: tp/pp/ep sizes and `world_size` (the GPUs), batch limits, `issue_rate`;
- `request_info`: the requests and their measured mean input/output lengths and concurrency;
- `performance`: `total_latency_ms` (first start to last end: the window), requests per s,
  output and total (input + output) tokens per s over that window, and percentiles of each
  request's end-to-end latency;
- `streaming_metrics` (when streamed): per-request TTFT, TPOT ((end - first token) / (output
  tokens - 1), our TPOT) and generation tokens per s (1/TPOT per request: our interactivity);
- `decoding_stats` (speculative decoding only): the mode and draft statistics;
- `dataset`: the lengths the dataset asked for (isl_stats/osl_stats) and its path.

Percentiles are trtllm-bench's own (PercentileStats.from_iterable: sorted[int(n * q)]).
Not stated, so not stored: failed requests (every request is counted, failed or not), the
concurrency cap (`avg_num_concurrent_requests` is a measured mean, kept aside), warm-up.
Lengths: a dataset whose lengths do not vary states them; otherwise the measured means are
derived, labelled as derived.
"""

from __future__ import annotations

from typing import Any

from workers.importers.common import (
    ImportInput,
    build_document,
    check_keys,
    drop_none,
    expect_object,
    integer,
    load_json,
    number,
)
from workers.importers.derived import lengths_from_means
from workers.importers.errors import ImportFailure
from workers.importers.registry import Format, Preview, register
from workers.results import ResultDocument

TOOL = "TensorRT-LLM trtllm-bench --report_json (TensorRT-LLM 0.2x-1.x)"
ENGINE = "trtllm"
DERIVED = "rounded means of trtllm-bench's request_info.avg_input_length / avg_output_length"
SECTIONS = (
    "engine",
    "machine",
    "world_info",
    "request_info",
    "performance",
    "streaming_metrics",
    "decoding_stats",
    "dataset",
)
# trtllm-bench's percentile names -> our Distribution's.
STATS = {"minimum": "min", "p50": "p50", "p90": "p90", "p95": "p95", "p99": "p99",
         "maximum": "max", "average": "mean"}  # fmt: skip
# Model dtypes as torch and TensorRT-LLM's checkpoints name them -> our weight precision.
DTYPES = {"bfloat16": "BF16", "float16": "FP16", "float32": "FP32"}


def _sniff(seen: Preview) -> bool:
    doc = seen.value
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("engine"), dict)
        and isinstance(doc.get("world_info"), dict)
        and "system_output_throughput_tok_s" in (doc.get("performance") or {})
    )


def _section(doc: dict[str, Any], name: str, where: str) -> dict[str, Any]:
    value = doc.get(name)
    return {} if value is None else expect_object(value, f"{where} {name}")


def _distribution(stats: Any, where: str, method: str) -> dict[str, Any] | None:
    if stats is None:
        return None
    stats = expect_object(stats, where)
    check_keys(stats, STATS, where)
    out = {ours: number(stats, theirs, where) for theirs, ours in STATS.items()}
    return {"method": method, **drop_none(out)}


def _weights(engine: dict[str, Any], where: str) -> tuple[str | None, str | None]:
    """(weights, how they were read). A null quantization is an unquantized checkpoint, whose
    weights are in the model's dtype (reporting.py: pretrained_config.quantization.quant_algo
    and pretrained_config.dtype for TRT engines, the ModelConfig's for the PyTorch backend)."""
    quantization = engine.get("quantization")
    if quantization is not None:
        return str(quantization), None
    dtype = engine.get("dtype")
    if dtype is None:
        return None, None
    if dtype not in DTYPES:
        raise ImportFailure(f"{where}: engine.dtype {dtype!r} is not a dtype this reader knows")
    return DTYPES[dtype], "engine.quantization is null: the weights are engine.dtype"


def _fixed_length(dataset: dict[str, Any], name: str, where: str) -> int | None:
    """The length every request of the dataset asked for, when they all asked the same."""
    stats = dataset.get(name)
    if not isinstance(stats, dict):
        return None
    low, high = number(stats, "minimum", where), number(stats, "maximum", where)
    if low is None or low != high or low != int(low) or low < 1:
        return None
    return int(low)


def _deployment(doc: dict[str, Any], where: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """What the report states of the deployment, and notes on how it was read."""
    engine = _section(doc, "engine", where)
    world = _section(doc, "world_info", where)
    machine = _section(doc, "machine", where)
    weights, weights_from = _weights(engine, where)
    quantization = {"weights": weights, "kv_cache": engine.get("kv_cache_dtype")}
    parallelism = {
        "tp": integer(world, "tp_size", where),
        "pp": integer(world, "pp_size", where),
        "ep": integer(world, "ep_size", where),
    }
    stated: dict[str, Any] = {
        "accelerator": machine.get("name"),
        "gpus": integer(world, "world_size", where),
        "engine": drop_none({"name": ENGINE, "version": engine.get("version")}),
        "quantization": drop_none(quantization),
        "parallelism": drop_none(parallelism),
    }
    backend = engine.get("backend")
    if backend:
        # The report names the backend (TRT, Pytorch), not the flag that chose it.
        stated["notes"] = f"trtllm-bench backend: {backend}"
    decoding = doc.get("decoding_stats")
    if isinstance(decoding, dict) and decoding.get("mode"):
        stated["speculative"] = {"method": str(decoding["mode"]).lower()}
    notes = drop_none({"weights_from": weights_from})
    return drop_none(stated), notes


def parse(job: ImportInput) -> list[ResultDocument]:
    where = job.main.name
    doc = expect_object(load_json(job.main), where)
    check_keys(doc, SECTIONS, where, required=("engine", "world_info", "performance"))
    engine = _section(doc, "engine", where)
    perf = _section(doc, "performance", where)
    streaming = _section(doc, "streaming_metrics", where)
    requests = _section(doc, "request_info", where)
    dataset = _section(doc, "dataset", where)
    method = f"reported by trtllm-bench {engine.get('version') or '(version not stated)'}"

    latency: dict[str, Any] = {}
    for slot, stats, name in (
        ("e2el", perf.get("request_latency_percentiles_ms"), "request_latency_percentiles_ms"),
        ("ttft", streaming.get("ttft_percentiles"), "ttft_percentiles"),
        ("tpot", streaming.get("tpot_percentiles"), "tpot_percentiles"),
    ):
        dist = _distribution(stats, f"{where} {name}", method)
        if dist:
            latency[slot] = dist
    total_ms = number(perf, "total_latency_ms", where)
    point: dict[str, Any] = {
        "window_s": total_ms / 1000 if total_ms else None,
        "throughput": drop_none(
            {
                "requests_per_s": number(perf, "request_throughput_req_s", where),
                "output_tok_s": number(perf, "system_output_throughput_tok_s", where),
                "total_tok_s": number(perf, "system_total_throughput_tok_s", where),
            }
        ),
        "latency_ms": latency,
        "interactivity_tok_s_user": _distribution(
            streaming.get("gen_tps_percentiles"), f"{where} gen_tps_percentiles", method
        ),
    }

    scenario: dict[str, Any] = {"arrival": "closed"}
    extra: dict[str, Any] = {}
    count = integer(requests, "num_requests", where)
    if count:
        scenario["request_count"] = count
    fixed = {
        "input_tokens": _fixed_length(dataset, "isl_stats", where),
        "output_tokens": _fixed_length(dataset, "osl_stats", where),
    }
    scenario.update(drop_none(fixed))
    if all(fixed.values()):
        scenario["length_spread"] = 0.0
    means = {
        "input_tokens": number(requests, "avg_input_length", where),
        "output_tokens": number(requests, "avg_output_length", where),
    }
    open_means = {slot: mean for slot, mean in means.items() if fixed[slot] is None}
    derived = lengths_from_means(job, open_means, count or 0, DERIVED)
    if derived:
        scenario.update(derived[0])
        extra["scenario_lengths"] = derived[1]

    deployment, notes = _deployment(doc, where)
    extra.update(notes)
    extra["trtllm_bench"] = drop_none(
        {
            "engine": {k: v for k, v in engine.items() if k not in ("model", "version")},
            "machine": doc.get("machine"),
            "world_info": doc.get("world_info"),
            "request_info": requests or None,
            "per_request_means": drop_none(
                {
                    key: perf.get(key) if key in perf else streaming.get(key)
                    for key in (
                        "avg_request_latency_ms",
                        "output_throughput_per_user_tok_s",
                        "output_throughput_per_gpu_tok_s",
                        "avg_ttft_ms",
                        "avg_tpot_ms",
                        "token_output_speed_tok_s",
                    )
                }
            ),
            "decoding_stats": doc.get("decoding_stats"),
            "dataset": dataset or None,
        }
    )
    return [
        build_document(
            job,
            tool=TOOL,
            model_stated=engine.get("model"),
            deployment_stated=deployment,
            scenario_stated=scenario,
            points=[drop_none(point)],
            environment={
                "loadgen_version": f"trtllm-bench {engine['version']}"
                if engine.get("version")
                else None,
                "extra": extra,
            },
        )
    ]


register(
    Format(
        name="trtllm-bench",
        tool=TOOL,
        summary="TensorRT-LLM trtllm-bench throughput/latency --report_json",
        sniff=_sniff,
        parse=parse,
    )
)
