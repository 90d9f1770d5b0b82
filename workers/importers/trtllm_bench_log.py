"""trtllm-bench's text report, as its log holds it (TensorRT-LLM 0.16 and later layouts).

After a run trtllm-bench logs its report as blocks under '=' banners (bench/dataclasses/
reporting.py, report_statistics): "ENGINE DETAILS" (TRT engines) or "PYTORCH BACKEND"
(model, TensorRT-LLM version, dtype, KV cache dtype, quantization), "WORLD + RUNTIME
INFORMATION" (TP/PP/EP sizes, batch limits, issue rate), in later versions "MACHINE
DETAILS" and "REQUEST DETAILS", then "PERFORMANCE OVERVIEW" and, in 0.16 when streamed,
"STREAMING STATISTICS". Figures are printed with four decimals.

Read, by the label each version prints (0.16 as at TensorRT-LLM 3856265, later ones as at
0249976):
- 0.16's "Token Throughput (tokens/sec)" is total output tokens over the total latency
  (`stats.total_output_tokens / total_latency_s`): our output tok/s; later versions print
  it as "Total Output Throughput", beside "Total Token Throughput" (input + output);
- "Total Latency (ms)" is first request start to last end: the window;
- "Average request latency", "Average time-to-first-token", 0.16's "Average inter-token
  latency" (per request (end - first token) / (output - 1): our TPOT) and later
  "[TPOT]" / "[TTFT]" / "[Latency]" / "[GTPS]" lines: per-request distributions;
- the world: GPUs are TP x PP (one rank per GPU), labelled as derived; the weights are the
  quantization, or the dtype when it is None (an unquantized checkpoint).
Lengths are the printed means over the requests, derived and labelled. Not stated: the GPU
(0.16 has no machine block), failed requests, the concurrency cap. A label this reader does
not know in these blocks is refused by name; other blocks (dataset, decoding statistics)
are kept as written.
"""

from __future__ import annotations

import re
from typing import Any

from workers.importers.common import ImportInput, build_document, decode_text, drop_none
from workers.importers.derived import lengths_from_means
from workers.importers.errors import ImportFailure
from workers.importers.registry import Format, Preview, register
from workers.importers.trtllm_bench import DTYPES, ENGINE
from workers.importers.trtllm_bench import STATS as REPORT_STATS
from workers.results import ResultDocument

TOOL = "TensorRT-LLM trtllm-bench text report (0.16 and later layouts)"
DERIVED = "rounded 'Average Input/Output Length (tokens)' of trtllm-bench's text report"
PERFORMANCE = "PERFORMANCE OVERVIEW"
_BANNER = re.compile(r"^= (?P<title>[A-Z][A-Z +]*[A-Z])\s*(\(.*\))?\s*$")
_RULE = re.compile(r"^=+\s*$")
_LOG_LINE = re.compile(r"^\[\d\d/\d\d/\d{4}-|^\[TensorRT-LLM\]")
_PERCENTILE = re.compile(
    r"^\[(?P<metric>Latency|TTFT|TPOT|GTPS)\]\s+(?P<stat>\w+)\s*:\s*(?P<v>\S+)$"
)
_VERSION = ("TensorRT-LLM Version", "TensorRT LLM Version")

# Labels of the blocks read, by block: label -> (where it goes, its name there).
READ: dict[str, dict[str, tuple[str, str]]] = {
    "ENGINE DETAILS": {
        "Model": ("engine", "model"),
        "Model Path": ("aside", "model_path"),
        "Engine Directory": ("aside", "engine_dir"),
        **{label: ("engine", "version") for label in _VERSION},
        "Dtype": ("engine", "dtype"),
        "KV Cache Dtype": ("engine", "kv_cache_dtype"),
        "Quantization": ("engine", "quantization"),
        "Max Input Length": ("aside", "max_input_length"),
        "Max Sequence Length": ("aside", "max_sequence_length"),
    },
    "WORLD + RUNTIME INFORMATION": {
        "TP Size": ("world", "tp"),
        "PP Size": ("world", "pp"),
        "EP Size": ("world", "ep"),
        "Max Runtime Batch Size": ("aside", "max_batch_size"),
        "Max Runtime Tokens": ("aside", "max_num_tokens"),
        "Scheduling Policy": ("aside", "scheduling_policy"),
        "KV Memory Percentage": ("aside", "kv_memory_percentage"),
        "Issue Rate (req/sec)": ("aside", "issue_rate"),
    },
    "REQUEST DETAILS": {
        "Number of requests": ("perf", "requests"),
        "Number of concurrent requests": ("aside", "avg_num_concurrent_requests"),
        "Average Input Length (tokens)": ("perf", "input_mean"),
        "Average Output Length (tokens)": ("perf", "output_mean"),
    },
    PERFORMANCE: {
        "Number of requests": ("perf", "requests"),
        "Average Input Length (tokens)": ("perf", "input_mean"),
        "Average Output Length (tokens)": ("perf", "output_mean"),
        "Token Throughput (tokens/sec)": ("perf", "output_tok_s"),  # 0.16: output tokens
        "Total Output Throughput (tokens/sec)": ("perf", "output_tok_s"),
        "Total Token Throughput (tokens/sec)": ("perf", "total_tok_s"),
        "Request Throughput (req/sec)": ("perf", "requests_per_s"),
        "Total Latency (ms)": ("perf", "total_latency_ms"),
        "Average request latency (ms)": ("perf", "e2el_mean"),
        "Average time-to-first-token [TTFT] (ms)": ("perf", "ttft_mean"),
        "Average time-per-output-token [TPOT] (ms)": ("perf", "tpot_mean"),
        "Per User Output Throughput [w/ ctx] (tps/user)": ("aside", "per_user_output_tok_s"),
        "Per GPU Output Throughput (tps/gpu)": ("aside", "per_gpu_output_tok_s"),
        "Per User Output Speed (tps/user)": ("aside", "per_user_output_speed_tok_s"),
        # The same three as some 0.2x versions label them (its docs' sample outputs).
        "Per User Output Throughput (tokens/sec/user)": ("aside", "per_user_output_tok_s"),
        "Per GPU Output Throughput (tokens/sec/gpu)": ("aside", "per_gpu_output_tok_s"),
        "Per User Output Speed [1/TPOT] (tokens/sec/user)": (
            "aside",
            "per_user_output_speed_tok_s",
        ),
    },
    "STREAMING STATISTICS": {
        "Average request latency (ms)": ("perf", "e2el_mean"),
        "Average time-to-first-token (ms)": ("perf", "ttft_mean"),
        "Average inter-token latency (ms)": ("perf", "tpot_mean"),
    },
}
READ["PYTORCH BACKEND"] = READ["ENGINE DETAILS"]
PERCENTILE_SLOTS = {"Latency": "e2el", "TTFT": "ttft", "TPOT": "tpot", "GTPS": "interactivity"}
# The report's statistics, as its JSON names them, upper-cased in the text ("P99", "AVERAGE").
STATS = {theirs.upper(): ours for theirs, ours in REPORT_STATS.items()}


def _sniff(seen: Preview) -> bool:
    text = seen.text
    return f"\n= {PERFORMANCE}" in text and any(f"\n{label}:" in text for label in _VERSION)


def _blocks(text: str, where: str) -> dict[str, list[str]]:
    """The report's lines, by block title; log lines end the report."""
    blocks: dict[str, list[str]] = {}
    current: str | None = None
    for line in text.replace("\r\n", "\n").split("\n"):
        banner = _BANNER.match(line)
        if banner:
            current = banner["title"]
            if current in blocks:
                raise ImportFailure(f"{where}: the log holds more than one '= {current}' block")
            blocks[current] = []
        elif _LOG_LINE.match(line):
            current = None
        elif current and line.strip() and not _RULE.match(line) and not line.startswith("--"):
            blocks[current].append(line.strip())
    if PERFORMANCE not in blocks:
        raise ImportFailure(f"{where}: no '= {PERFORMANCE}' block")
    return blocks


def _number(value: str, label: str, where: str) -> float:
    try:
        return float(value.rstrip("%"))
    except ValueError:
        raise ImportFailure(f"{where}: '{label}' is {value!r}, not a number") from None


def _read(blocks: dict[str, list[str]], where: str) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {"engine": {}, "world": {}, "perf": {}, "aside": {}}
    found["percentiles"] = {}
    for title, lines in blocks.items():
        labels = READ.get(title)
        if labels is None:  # dataset, decoding statistics, machine: kept as written
            found["aside"][title] = lines
            continue
        for line in lines:
            percentile = _PERCENTILE.match(line)
            if percentile and title == PERFORMANCE:
                slot = PERCENTILE_SLOTS[percentile["metric"]]
                stat = STATS.get(percentile["stat"].upper())
                if stat is None:
                    raise ImportFailure(f"{where}: unknown statistic in {line!r}")
                figure = _number(percentile["v"], line, where)
                found["percentiles"].setdefault(slot, {})[stat] = figure
                continue
            label, _, value = line.partition(":")
            label, value = label.strip(), value.strip()
            if label not in labels:
                raise ImportFailure(f"{where}: '{label}' in block '{title}' is not a label "
                                    "this reader knows")  # fmt: skip
            group, name = labels[label]
            found[group][name] = value
    return found


def _machine(blocks: dict[str, list[str]]) -> str | None:
    """The GPU name later versions print ('NVIDIA B200, memory 179.06 GB, 3.99 GHz')."""
    lines = blocks.get("MACHINE DETAILS") or []
    if len(lines) == 1 and ", memory " in lines[0]:
        return lines[0].split(", memory ", 1)[0]
    return None


def _deployment(found: dict[str, dict[str, Any]], machine: str | None, where: str) -> dict:
    engine, world = found["engine"], found["world"]
    quantization, dtype = engine.get("quantization"), engine.get("dtype")
    weights = None
    if quantization not in (None, "None"):
        weights = quantization
    elif dtype in DTYPES:
        weights = DTYPES[dtype]
        found["aside"]["weights_from"] = "Quantization is None: the weights are the Dtype"
    sizes = {
        key: int(_number(world[key], key, where))
        for key in ("tp", "pp", "ep")
        if world.get(key) not in (None, "None")
    }
    deployment: dict[str, Any] = {
        "accelerator": machine,
        "engine": drop_none({"name": ENGINE, "version": engine.get("version")}),
        "quantization": drop_none(
            {
                "weights": weights,
                "kv_cache": None
                if engine.get("kv_cache_dtype") in (None, "None")
                else engine["kv_cache_dtype"],
            }
        ),
        "parallelism": sizes,
    }
    if "tp" in sizes and "pp" in sizes:
        deployment["gpus"] = sizes["tp"] * sizes["pp"]
        found["aside"]["gpus_from"] = "TP Size x PP Size: one rank per GPU"
    return drop_none(deployment)


def parse(job: ImportInput) -> list[ResultDocument]:
    where = job.main.name
    blocks = _blocks(decode_text(job.main), where)
    found = _read(blocks, where)
    perf = {name: _number(value, name, where) for name, value in found["perf"].items()}
    method = f"reported by trtllm-bench {found['engine'].get('version', '(version not stated)')}"
    latency: dict[str, Any] = {}
    for slot in ("e2el", "ttft", "tpot"):
        dist = dict(found["percentiles"].get(slot, {}))
        if f"{slot}_mean" in perf:
            dist["mean"] = perf[f"{slot}_mean"]
        if dist:
            latency[slot] = {"method": method, **dist}
    interactivity = found["percentiles"].get("interactivity")
    point: dict[str, Any] = {
        "window_s": perf["total_latency_ms"] / 1000 if perf.get("total_latency_ms") else None,
        "throughput": drop_none(
            {k: perf.get(k) for k in ("requests_per_s", "output_tok_s", "total_tok_s")}
        ),
        "latency_ms": latency,
        "interactivity_tok_s_user": {"method": method, **interactivity} if interactivity else None,
    }
    requests = int(perf["requests"]) if perf.get("requests") else 0
    scenario: dict[str, Any] = {"arrival": "closed"}
    if requests:
        scenario["request_count"] = requests
    extra: dict[str, Any] = {}
    means = {"input_tokens": perf.get("input_mean"), "output_tokens": perf.get("output_mean")}
    derived = lengths_from_means(job, means, requests, DERIVED)
    if derived:
        scenario.update(derived[0])
        extra["scenario_lengths"] = derived[1]
    deployment = _deployment(found, _machine(blocks), where)
    extra["trtllm_bench_report"] = {**found["aside"], "engine": found["engine"]}
    version = found["engine"].get("version")
    return [
        build_document(
            job,
            tool=TOOL,
            model_stated=found["engine"].get("model"),
            deployment_stated=deployment,
            scenario_stated=scenario,
            points=[drop_none(point)],
            environment={
                "loadgen_version": f"trtllm-bench {version}" if version else None,
                "extra": extra,
            },
        )
    ]


register(
    Format(
        name="trtllm-bench-log",
        tool=TOOL,
        summary="trtllm-bench's text report in its log (ENGINE DETAILS ... PERFORMANCE OVERVIEW)",
        sniff=_sniff,
        parse=parse,
    )
)
