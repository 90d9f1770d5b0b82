"""NVIDIA genai-perf `profile_export_genai_perf.json` (triton-inference-server/perf_analyzer).

genai-perf writes one aggregated export per run: metric objects `{"unit": ..., "avg": ...,
"p1".."p99", "min", "max", "std"}` (the same shape as its successor aiperf) and the run's
`input_config`, in one of two layouts:

- flat (CLI-argument era): `input_config.model`, `concurrency`, `request_rate`,
  `warmup_request_count`, `synthetic_input_tokens_mean/stddev`, `output_tokens_mean/stddev`;
- nested (config-file era, with optional `telemetry_stats`): `input_config.model_names`,
  `perf_analyzer.stimulus` {concurrency | request_rate}, `perf_analyzer.warmup_request_count`,
  `input.synthetic_tokens` and `input.output_tokens` {mean, stddev}.

Neither layout names the genai-perf version; the layout is what this reader tells apart.
Mapped: request_throughput (req/s), output_token_throughput (tok/s), request_count (the
successful requests), time_to_first_token -> TTFT, request_latency -> E2EL and
inter_token_latency -> TPOT (genai-perf computes it per request as (latency - TTFT) /
(output tokens - 1), our TPOT). Not stated, so not stored: failed requests, the window,
token totals (only per-request length statistics, kept aside with the other metrics
without a slot). When the synthetic stddev is not 0 the scenario's lengths are the measured
means (input_sequence_length, output_sequence_length avg over the successful requests),
labelled as derived. `telemetry_stats` (GPU power, memory, clocks) is not imported.
"""

from __future__ import annotations

from typing import Any

from workers.importers.aiperf import STATS, _expect_unit, _metric, _time_distribution
from workers.importers.common import (
    ImportInput,
    build_document,
    dataset_name,
    drop_none,
    expect_object,
    load_json,
    rate_bound,
)
from workers.importers.derived import lengths_from_means, sequence_length_means
from workers.importers.errors import ImportFailure
from workers.importers.registry import Format, Preview, register
from workers.results import ResultDocument

TOOL = "NVIDIA genai-perf 0.0.x (profile_export_genai_perf.json, flat or nested input_config)"
DERIVED = "rounded means of genai-perf's input_sequence_length and output_sequence_length"

LATENCY = {
    "time_to_first_token": "ttft",
    "request_latency": "e2el",
    "inter_token_latency": "tpot",
}
KEPT_ASIDE = {
    "time_to_second_token",
    "output_token_throughput_per_request",
    "output_token_throughput_per_user",
    "output_sequence_length",
    "input_sequence_length",
}
TOP_LEVEL = {
    "request_throughput",
    "request_count",
    "output_token_throughput",
    "telemetry_stats",
    "input_config",
    *LATENCY,
    *KEPT_ASIDE,
}


def _sniff(seen: Preview) -> bool:
    row = seen.value
    if not isinstance(row, dict) or "aiperf_version" in row or "schema_version" in row:
        return False
    config = row.get("input_config")
    metric = row.get("request_throughput")
    return (
        isinstance(config, dict)
        and "loadgen" not in config
        and isinstance(metric, dict)
        and "unit" in metric
        and "avg" in metric
    )


def _config(config: dict[str, Any]) -> dict[str, Any]:
    """The run's settings from either input_config layout, under one set of names."""
    if "perf_analyzer" in config or "model_names" in config:  # nested
        analyzer = config.get("perf_analyzer") or {}
        stimulus = analyzer.get("stimulus") or {}
        source = config.get("input") or {}
        names = config.get("model_names") or []
        return {
            "model": names[0] if len(names) == 1 else None,
            "concurrency": stimulus.get("concurrency"),
            "rate": stimulus.get("request_rate"),
            "warmup": analyzer.get("warmup_request_count"),
            "prompt_source": source.get("prompt_source"),
            "isl": source.get("synthetic_tokens") or {},
            "osl": source.get("output_tokens") or {},
            "endpoint_type": (config.get("endpoint") or {}).get("type"),
        }
    names = config.get("model") or []
    return {
        "model": names[0] if isinstance(names, list) and len(names) == 1 else None,
        "concurrency": config.get("concurrency"),
        "rate": config.get("request_rate"),
        "warmup": config.get("warmup_request_count"),
        "prompt_source": config.get("prompt_source"),
        "isl": {
            "mean": config.get("synthetic_input_tokens_mean"),
            "stddev": config.get("synthetic_input_tokens_stddev"),
        },
        "osl": {
            "mean": config.get("output_tokens_mean"),
            "stddev": config.get("output_tokens_stddev"),
        },
        "endpoint_type": config.get("endpoint_type"),
    }


def parse(job: ImportInput) -> list[ResultDocument]:
    where = job.main.name
    doc = expect_object(load_json(job.main), where)
    unknown = sorted(k for k in doc if k not in TOP_LEVEL)
    if unknown:
        raise ImportFailure(f"{where}: unknown field(s) {', '.join(unknown)}")
    settings = _config(expect_object(doc["input_config"], f"{where} input_config"))

    latency: dict[str, Any] = {}
    unslotted: dict[str, Any] = {}
    for name, slot in LATENCY.items():
        metric = _metric(doc, name, where)
        if metric is None:
            continue
        latency[slot] = _time_distribution(metric, name, where)
        extra_stats = {k: v for k, v in metric.items() if k not in STATS and k != "unit"}
        if extra_stats:
            unslotted[name] = extra_stats
    throughput = {"requests_per_s": _expect_unit(doc["request_throughput"], "request_throughput",
                                                 "requests/sec", where)}  # fmt: skip
    output_rate = _metric(doc, "output_token_throughput", where)
    if output_rate is not None:
        throughput["output_tok_s"] = _expect_unit(
            output_rate, "output_token_throughput", "tokens/sec", where
        )
    count = _metric(doc, "request_count", where)
    succeeded = None
    if count is not None:
        value = _expect_unit(count, "request_count", "count", where)
        if value != int(value):
            raise ImportFailure(f"{where}: request_count.avg should be a whole number")
        succeeded = int(value)

    point: dict[str, Any] = {
        "concurrency": settings["concurrency"],
        "throughput": throughput,
        "latency_ms": latency,
        # genai-perf reports the requests that completed; failures are not stated.
        "requests": {"succeeded": succeeded} if succeeded is not None else None,
    }
    scenario: dict[str, Any] = {"arrival": "closed"}
    extra: dict[str, Any] = {}
    if settings["rate"]:
        extra["requested_rate"] = settings["rate"]
        if rate_bound(settings["rate"], settings["concurrency"], throughput["requests_per_s"]):
            scenario["arrival"] = "open"
            point["request_rate"] = settings["rate"]
    if settings["warmup"] is not None:
        scenario["warmup_requests"] = settings["warmup"]
    if settings["prompt_source"]:
        scenario["dataset"] = dataset_name(str(settings["prompt_source"]))
    isl, osl = settings["isl"], settings["osl"]
    if (
        settings["prompt_source"] == "synthetic"
        and isl.get("mean")
        and osl.get("mean")
        and isl.get("stddev") == 0
        and osl.get("stddev") == 0
    ):
        # Fixed lengths; a nonzero stddev is a normal spread our scenario cannot state.
        scenario.update(
            input_tokens=int(isl["mean"]), output_tokens=int(osl["mean"]), length_spread=0.0
        )
    if "input_tokens" not in scenario:
        # Lengths drawn with a spread (or prompts from a file): the file states the means it
        # measured, derived and labelled, never asked.
        means = sequence_length_means(doc)
        derived = lengths_from_means(job, means, int(succeeded or 0), DERIVED)
        if derived:
            scenario.update(derived[0])
            extra["scenario_lengths"] = derived[1]
    extra["metrics_without_slot"] = {
        name: {k: v for k, v in doc[name].items()} for name in KEPT_ASIDE if name in doc
    }
    if unslotted:
        extra["percentiles_without_slot"] = unslotted
    extra["endpoint_type"] = settings["endpoint_type"]
    extra["synthetic_lengths"] = {"input": isl, "output": osl}
    return [
        build_document(
            job,
            tool=TOOL,
            model_stated=settings["model"],
            deployment_stated={},
            scenario_stated=scenario,
            points=[drop_none(point)],
            environment={"extra": drop_none(extra)},
        )
    ]


register(
    Format(
        name="genai-perf",
        tool=TOOL,
        summary="NVIDIA genai-perf aggregated export (flat or nested input_config)",
        sniff=_sniff,
        parse=parse,
    )
)
