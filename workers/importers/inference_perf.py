"""kubernetes-sigs/inference-perf lifecycle reports: `summary_lifecycle_metrics.json` and
`stage_<n>_lifecycle_metrics.json`.

Reads the report written by `summarize_requests` in `inference_perf/reportgen/base.py`
(kubernetes-sigs/inference-perf main at 010d12fb, 2026; the 0.2+ layout): top-level
`benchmark_time_seconds`, `load_summary` (count, schedule_delay, and for a stage
requested_rate / achieved_rate / concurrency), `successes` (count, `latency` with
request_latency, time_to_first_token, time_per_output_token, normalized_time_per_output_token
and inter_token_latency, all in SECONDS from perf_counter differences, each summarised as
mean/min/max/median/p<P>; `throughput` per second; prompt_tokens and output_tokens with
totals; client_fallback_requests; optional goodput_metrics) and `failures` (count,
by_label).

Two of its numbers do not match our definitions and are kept aside in environment.extra
rather than mapped: `inter_token_latency` gives every token of a multi-token chunk the
chunk's arrival time (intra-chunk gaps of 0), which is neither our per-chunk nor our
token-weighted ITL; and `prompt_tokens.cached` sums a missing cached-token field as 0, so
a 0 there may mean "not reported" and is not imported as a cache measurement.
"""

from __future__ import annotations

from typing import Any

from workers.importers.common import (
    ImportInput,
    build_document,
    check_keys,
    drop_none,
    expect_object,
    load_json,
    number,
    to_ms,
)
from workers.importers.derived import lengths_from_means
from workers.importers.errors import ImportFailure
from workers.importers.registry import Format, Preview, register
from workers.results import ResultDocument
from workers.slo import STAT_SLOTS

TOOL = "inference-perf (lifecycle report, 010d12fb)"
DERIVED = "rounded means of the successful requests' prompt_len and output_len"

TOP_LEVEL = {"benchmark_time_seconds", "load_summary", "successes", "failures", "retries"}
LOAD_KEYS = {
    "count",
    "schedule_delay",
    "send_duration",
    "requested_rate",
    "achieved_rate",
    "concurrency",
}
SUCCESS_KEYS = {
    "count",
    "rate",
    "latency",
    "throughput",
    "request_size_bytes",
    "image",
    "video",
    "audio",
    "prompt_tokens",
    "prompt_len",
    "output_len",
    "output_tokens",
    "token_count_mismatches",
    "client_fallback_requests",
    "goodput_metrics",
}
FAILURE_KEYS = {"count", "request_latency", "prompt_tokens", "prompt_len", "by_label"}
LATENCY = {
    "time_to_first_token": "ttft",
    "time_per_output_token": "tpot",  # (last token - first token) / (tokens - 1)
    "request_latency": "e2el",
}
LATENCY_ASIDE = {"normalized_time_per_output_token", "inter_token_latency"}
THROUGHPUT = {
    "requests_per_sec": "requests_per_s",
    "input_tokens_per_sec": "input_tok_s",
    "output_tokens_per_sec": "output_tok_s",
    "total_tokens_per_sec": "total_tok_s",
}
THROUGHPUT_ASIDE = {"images_per_sec", "videos_per_sec", "audios_per_sec"}


def _sniff(seen: Preview) -> bool:
    row = seen.value
    return isinstance(row, dict) and {"load_summary", "successes", "failures"} <= set(row)


def _summary_ms(
    summary: Any, name: str, where: str, aside: dict[str, float]
) -> dict[str, float] | None:
    """A summarize() dict in seconds -> Distribution in ms; other percentiles kept aside."""
    if summary is None:
        return None
    summary = expect_object(summary, f"{where} {name}")
    out: dict[str, float] = {}
    for key in summary:
        value = to_ms(number(summary, key, f"{where} {name}"), "s")
        if value is None:
            continue
        if key in STAT_SLOTS:
            out[STAT_SLOTS[key]] = value
        elif key.startswith("p"):
            aside[f"{name}.{key}"] = value
        else:
            raise ImportFailure(f"{where}: unknown statistic {name}.{key}")
    return out or None


def parse(job: ImportInput) -> list[ResultDocument]:
    where = job.main.name
    doc = expect_object(load_json(job.main), where)
    check_keys(doc, TOP_LEVEL, where, ("load_summary", "successes", "failures"))
    load = expect_object(doc["load_summary"], f"{where} load_summary")
    successes = expect_object(doc["successes"], f"{where} successes")
    failures = expect_object(doc["failures"], f"{where} failures")
    check_keys(load, LOAD_KEYS, f"{where} load_summary")
    check_keys(successes, SUCCESS_KEYS, f"{where} successes", ("count",))
    check_keys(failures, FAILURE_KEYS, f"{where} failures")

    succeeded = int(successes["count"])
    failed = int(failures.get("count") or 0)
    if load.get("count") is not None and load["count"] != succeeded + failed:
        raise ImportFailure(
            f"{where}: load_summary.count {load['count']} is not successes + failures "
            f"({succeeded} + {failed})"
        )

    aside: dict[str, Any] = {}
    latency_in = expect_object(successes.get("latency") or {}, f"{where} successes.latency")
    check_keys(latency_in, set(LATENCY) | LATENCY_ASIDE, f"{where} successes.latency")
    latency = {}
    for name, slot in LATENCY.items():
        dist = _summary_ms(latency_in.get(name), name, where, aside)
        if dist:
            latency[slot] = dist
    for name in LATENCY_ASIDE:
        if latency_in.get(name):
            aside[f"{name}_ms"] = _summary_ms(latency_in[name], name, where, aside)

    throughput_in = expect_object(successes.get("throughput") or {}, f"{where} throughput")
    check_keys(throughput_in, set(THROUGHPUT) | THROUGHPUT_ASIDE, f"{where} throughput")
    throughput = {
        slot: number(throughput_in, name, where)
        for name, slot in THROUGHPUT.items()
        if throughput_in.get(name) is not None
    }

    point: dict[str, Any] = {
        "window_s": number(doc, "benchmark_time_seconds", where),
        "requests": {"total": succeeded + failed, "succeeded": succeeded, "failed": failed},
        "throughput": throughput,
        "latency_ms": latency,
        "tokens": _tokens(successes, where, aside),
        "errors": {
            str(label)[:100]: int(entry.get("count", 0))
            for label, entry in (failures.get("by_label") or {}).items()
        },
    }
    goodput = successes.get("goodput_metrics") or {}
    if goodput.get("request_goodput") is not None:
        point["goodput_rps"] = number(goodput, "request_goodput", where)
        aside["goodput_metrics"] = goodput

    scenario: dict[str, Any] = {}
    if load.get("concurrency"):
        point["concurrency"] = int(load["concurrency"])
        scenario["arrival"] = "closed"
    elif load.get("requested_rate"):
        point["request_rate"] = number(load, "requested_rate", where)
        scenario["arrival"] = "open"
    if load.get("achieved_rate") is not None:
        aside["achieved_rate"] = load["achieved_rate"]
    if load.get("schedule_delay"):
        aside["schedule_delay_ms"] = _summary_ms(
            load["schedule_delay"], "schedule_delay", where, aside
        )
    # Said by the file, with no slot of ours: kept as written rather than dropped.
    for name in ("send_duration",):
        if load.get(name) is not None:
            aside[f"load_summary.{name}"] = load[name]
    for name in ("prompt_len", "output_len"):
        if successes.get(name) is not None:
            aside[f"successes.{name}"] = successes[name]
    if failures.get("prompt_len") is not None:
        aside["failures.prompt_len"] = failures["prompt_len"]

    extra: dict[str, Any] = {"not_mapped": aside}
    # The workload (a ShareGPT-like mix) has no target lengths: the file states the means of
    # what the successful requests sent and got, derived and labelled, never asked.
    means = {
        slot: (successes.get(name) or {}).get("mean")
        for slot, name in (("input_tokens", "prompt_len"), ("output_tokens", "output_len"))
    }
    derived = lengths_from_means(job, means, int(succeeded or 0), DERIVED)
    if derived:
        scenario.update(derived[0])
        extra["scenario_lengths"] = derived[1]

    return [
        build_document(
            job,
            tool=TOOL,
            model_stated=None,
            deployment_stated={},
            scenario_stated=scenario,
            points=[drop_none(point)],
            environment={"extra": extra},
        )
    ]


def _tokens(successes: dict[str, Any], where: str, aside: dict[str, Any]) -> dict[str, Any]:
    prompt = successes.get("prompt_tokens") or {}
    output = successes.get("output_tokens") or {}
    tokens: dict[str, Any] = {}
    if (stated := number(prompt, "total", where)) is not None:
        tokens["input"] = int(stated)
    if (stated := number(output, "total", where)) is not None:
        tokens["output"] = int(stated)
    if prompt.get("cached") is not None:
        aside["prompt_tokens_cached_or_unreported"] = prompt["cached"]
    fallbacks = successes.get("client_fallback_requests")
    if isinstance(fallbacks, dict) and not any(fallbacks.values()):
        tokens["source"] = "usage"  # every count came from the server's usage
    else:
        tokens["source"] = "unknown"
    return tokens


register(
    Format(
        name="inference-perf",
        tool=TOOL,
        summary="inference-perf summary/stage lifecycle metrics JSON (latencies in seconds)",
        sniff=_sniff,
        parse=parse,
    )
)
