"""NVIDIA aiperf exports: `profile_export_aiperf.json` plus, optionally, the per-request
`profile_export.jsonl`.

Reads aiperf 0.13.0 (export schema_version 1.4; checked against real 0.13.0 files). In the
summary every metric is an object carrying its own `unit` ("ms", "sec", "tokens/sec",
"%" ...) with avg, std, min, max and p1..p99; units are taken from there. `input_config`
states the endpoint, the dataset's ISL/OSL (mean, stddev) and the phases (warm-up and
profiling, with concurrency and rate). Warm-up statistics sit apart in `warmup_metrics`
and are not imported.

Also reads aiperf 0.10.0 (export schema_version 1.3, real files from a user's vLLM runs):
1.4's config layout, except that phases are known by their name (no `kind`), a dataset read
from a file states its format (e.g. multi_turn) and no lengths, and GPU telemetry sits in a
top-level `telemetry_data`.

Also reads aiperf 0.8 (export schema_version 1.0, 1.1 and 1.2, real files from InferenceX's
agentic runs and a user's lab runs of GGUF models): the same metric objects, but
`input_config` has another shape (endpoint.model_names, input.public_dataset or synthetic
prompts, loadgen.concurrency / request_rate / request_count) and a few more top-level
blocks (telemetry_data, branch_stats, metadata).
Each schema has its own small `Shape` (how to read the config), not special cases in one.
A trace dataset (public_dataset), a file of prompts or synthetic lengths with a spread state
no fixed lengths: the scenario carries the mean input and output lengths the run sent
(input_sequence_length, output_sequence_length), labelled as derived, unless facts give them.

Percentiles without a schema slot (p1, p5, p10, p25, p75) are kept as written in
environment.extra; when the token counts come from usage but aiperf's input/output token
throughput was counted with the tokenizer (totals differ), that throughput is kept aside
rather than mixed with the usage counts.

Request counts: `request_count` is aiperf's successful requests, `error_request_count` the
failed ones, and `completed_request_count` (where written) their sum, checked, never read as
successes. A run aiperf says was cancelled (`was_cancelled: true`) or incomplete
(`is_complete: false`) imports what it measured, with the reason in `stopped_early` and status
partial; one cancelled before any request succeeded holds no measurement and is refused.

Per-request records (nanosecond `request_start_ns` in `metadata`, metrics each with a unit)
become the point's records; records whose `metadata.benchmark_phase` is "warmup" are left
out, as aiperf itself leaves them out of its statistics.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from workers.importers.aiperf_shapes import KEPT_ASIDE_PREFIXES, SHAPES, TOOL, UNVERSIONED, Shape
from workers.importers.common import (
    TIME_TO_MS,
    ImportInput,
    PeerFile,
    build_document,
    companion_alone,
    drop_none,
    expect_object,
    load_json,
    load_jsonl,
    rate_bound,
)
from workers.importers.derived import lengths_from_means, sequence_length_means
from workers.importers.errors import ImportFailure
from workers.importers.registry import Format, Preview, register
from workers.results import ResultDocument

DERIVED = "rounded means of aiperf's input_sequence_length and output_sequence_length"
# Metrics we map: name -> expected kind of unit ("time" is converted to ms by its unit).
LATENCY = {
    "time_to_first_token": "ttft",
    "time_to_first_output_token": "ttfo",
    "inter_token_latency": "tpot",  # aiperf: (request_latency - ttft) / (osl - 1)
    "inter_chunk_latency": "itl",  # per-chunk gaps
    "request_latency": "e2el",
}
THROUGHPUT = {
    "request_throughput": ("requests_per_s", "requests/sec"),
    "input_token_throughput": ("input_tok_s", "tokens/sec"),
    "output_token_throughput": ("output_tok_s", "tokens/sec"),
    "total_token_throughput": ("total_tok_s", "tokens/sec"),
}
COUNTS = {
    "request_count",
    "completed_request_count",
    "error_request_count",
    "total_isl",
    "total_osl",
    "total_output_tokens",
    "total_usage_prompt_tokens",
    "total_usage_completion_tokens",
    "total_usage_prompt_cache_read_tokens",
    "total_usage_total_tokens",
    "benchmark_duration",
    "overall_usage_prompt_cache_read_pct",
    "output_token_throughput_per_user",
    "request_error_rate",
}
STATS = {
    "avg": "mean",
    "std": "std",
    "min": "min",
    "p50": "p50",
    "p90": "p90",
    "p95": "p95",
    "p99": "p99",
    "max": "max",
}


def _sniff(seen: Preview) -> bool:
    row = seen.value
    if not isinstance(row, dict):
        return False
    if "aiperf_version" in row and "schema_version" in row:
        return True
    # Exports from before schema_version: aiperf's config blocks and its metric objects.
    config = row.get("input_config")
    metric = row.get("request_throughput")
    return (
        isinstance(config, dict)
        and "loadgen" in config
        and isinstance(metric, dict)
        and "unit" in metric
    )


def _sniff_records(seen: Preview) -> bool:
    row = seen.first_line
    return (
        isinstance(row, dict)
        and set(row) >= {"metadata", "metrics"}
        and "benchmark_phase" in row["metadata"]
    )


def _metric(doc: dict[str, Any], name: str, where: str) -> dict[str, Any] | None:
    value = doc.get(name)
    if value is None:
        return None
    if not isinstance(value, dict) or "unit" not in value or "avg" not in value:
        raise ImportFailure(f"{where}: metric {name} should be an object with unit and avg")
    return value


def _time_distribution(metric: dict[str, Any], name: str, where: str) -> dict[str, float]:
    unit = metric["unit"]
    if unit not in TIME_TO_MS:
        raise ImportFailure(f"{where}: metric {name} has unit {unit!r}, expected a time unit")
    factor = TIME_TO_MS[unit]
    return {
        slot: (metric[stat] if factor == 1.0 else metric[stat] * factor)
        for stat, slot in STATS.items()
        if metric.get(stat) is not None
    }


def _metric_shaped(value: Any) -> bool:
    """An aiperf metric object: its unit and at least one statistic."""
    return isinstance(value, dict) and "unit" in value and any(k in value for k in STATS)


def _expect_unit(metric: dict[str, Any], name: str, unit: str, where: str) -> float:
    if metric["unit"] != unit:
        raise ImportFailure(f"{where}: metric {name} has unit {metric['unit']!r}, expected {unit}")
    return metric["avg"]


def parse(job: ImportInput) -> list[ResultDocument]:
    where = job.main.name
    doc = expect_object(load_json(job.main), where)
    schema, version = doc.get("schema_version"), doc.get("aiperf_version")
    shape = SHAPES.get(str(schema)) if schema is not None else UNVERSIONED
    if shape is None:
        raise ImportFailure(
            f"{where}: this looks like aiperf {version} (export schema_version {schema!r}), "
            f"which we read as of aiperf 0.8 (schemas {', '.join(sorted(SHAPES))})"
        )
    return _parse(job, doc, shape, where)


def _parse(job: ImportInput, doc: dict[str, Any], shape: Shape, where: str) -> list:
    metric_names = [k for k in doc if k not in shape.top_level]
    unknown = [
        k
        for k in metric_names
        if k not in LATENCY
        and k not in THROUGHPUT
        and k not in COUNTS
        and k not in shape.kept_aside
        and not k.startswith(KEPT_ASIDE_PREFIXES)
    ]
    # aiperf adds metrics release by release (0.8's adj_* counts): a metric object we do not
    # know is kept as written and the rest imports; an unknown field of another shape may
    # change what the known ones mean, so it still refuses the file.
    not_metrics = sorted(k for k in unknown if not _metric_shaped(doc[k]))
    if not_metrics:
        raise ImportFailure(f"{where}: unknown field(s) {', '.join(not_metrics)}")
    not_read = {k: {"avg": doc[k].get("avg"), "unit": doc[k]["unit"]} for k in sorted(unknown)}

    def avg(name: str, unit: str) -> float | None:
        metric = _metric(doc, name, where)
        return None if metric is None else _expect_unit(metric, name, unit, where)

    latency = {}
    unslotted: dict[str, dict[str, float]] = {}
    for name, slot in LATENCY.items():
        metric = _metric(doc, name, where)
        if metric is not None:
            latency[slot] = _time_distribution(metric, name, where)
            extra_stats = {
                k: v for k, v in metric.items() if re.fullmatch(r"p\d+", k) and k not in STATS
            }
            if extra_stats:
                unslotted[name] = {"unit": metric["unit"], **extra_stats}
    throughput = {}
    for name, (slot, unit) in THROUGHPUT.items():
        value = avg(name, unit)
        if value is not None:
            throughput[slot] = value

    duration = _metric(doc, "benchmark_duration", where)
    window_s = None
    if duration is not None:
        unit = duration["unit"]
        if unit not in TIME_TO_MS:
            raise ImportFailure(f"{where}: benchmark_duration has unit {unit!r}")
        window_s = duration["avg"] * TIME_TO_MS[unit] / 1000.0

    requests = _request_counts(doc, where)
    completed = requests["succeeded"]
    stopped = _stopped_early(doc)
    if stopped and not completed:
        # Cancelled before a request succeeded: there is nothing measured to keep.
        raise ImportFailure(
            f"{where}: this aiperf run was cancelled ({stopped}) before any request "
            f"succeeded ({requests['failed']} failed): it holds no measurement to import"
        )
    usage_in = avg("total_usage_prompt_tokens", "tokens")
    usage_out = avg("total_usage_completion_tokens", "tokens")
    mixed: dict[str, Any] = {}
    if usage_in is not None and usage_out is not None:
        tokens = {"input": int(usage_in), "output": int(usage_out), "source": "usage"}
        for slot, total, usage in (
            ("input_tok_s", "total_isl", usage_in),
            ("output_tok_s", "total_osl", usage_out),
        ):
            counted = avg(total, "tokens")
            if slot in throughput and counted is not None and counted != usage:
                # aiperf's token throughput counts tokenizer tokens; the counts are usage.
                mixed[slot] = {"value": throughput.pop(slot), "counted_by": "tokenizer"}
        cached = avg("total_usage_prompt_cache_read_tokens", "tokens")
        if cached is not None:
            tokens["cached"] = int(cached)
    else:
        tokens = {
            "input": int(avg("total_isl", "tokens") or 0),
            "output": int(avg("total_osl", "tokens") or 0),
            "source": "tokenizer",
        }
    hit = avg("overall_usage_prompt_cache_read_pct", "%")

    point: dict[str, Any] = {
        "window_s": window_s,
        "requests": requests,
        "tokens": tokens,
        "throughput": throughput,
        "latency_ms": latency,
        "prefix_cache_hit_rate": None if hit is None else hit / 100.0,
    }
    per_user = _metric(doc, "output_token_throughput_per_user", where)
    if per_user is not None:
        if per_user["unit"] != "tokens/sec/user":
            raise ImportFailure(
                f"{where}: output_token_throughput_per_user unit {per_user['unit']}"
            )
        point["interactivity_tok_s_user"] = {
            slot: per_user[stat] for stat, slot in STATS.items() if per_user.get(stat) is not None
        }
    if doc.get("error_summary"):
        point["errors"] = _errors(doc["error_summary"], where)

    environment_extra: dict[str, Any] = {}
    if unslotted:
        environment_extra["percentiles_without_slot"] = unslotted
    if mixed:
        environment_extra["throughput_not_usage_counted"] = mixed
    scenario, phase = shape.scenario(doc, where)
    if "input_tokens" not in scenario:
        # A trace, a file of prompts or lengths drawn with a spread: the lengths the file
        # states are the means aiperf measured, derived and labelled, never asked.
        means = sequence_length_means(doc)
        derived = lengths_from_means(job, means, int(completed), DERIVED)
        if derived:
            scenario.update(derived[0])
            environment_extra["scenario_lengths"] = derived[1]
    if phase.get("concurrency"):
        point["concurrency"] = phase["concurrency"]
    achieved = throughput.get("requests_per_s")
    if scenario.get("arrival") == "open":
        environment_extra["requested_rate"] = phase["rate"]
        if not rate_bound(phase["rate"], phase.get("concurrency"), achieved):
            # The concurrency cap, not the rate, set the pace (e.g. --concurrency 1
            # --request-rate 200 achieved 1.37 req/s): that is a closed-loop run.
            scenario["arrival"] = "closed"
        else:
            point["request_rate"] = phase["rate"]

    companions = list(job.companions)
    if len(companions) > 1:
        raise ImportFailure(f"{where}: give at most one per-request profile_export.jsonl")
    if companions:
        point["records"] = _records(companions[0], requests["total"])

    aside = {
        name: {"avg": doc[name]["avg"], "unit": doc[name]["unit"]}
        for name in metric_names
        if (name in shape.kept_aside or name.startswith(KEPT_ASIDE_PREFIXES))
        and isinstance(doc[name], dict)
        and "avg" in doc[name]
    }
    endpoint = (doc.get("input_config") or {}).get("endpoint") or {}
    environment = {
        # Exports from before aiperf_version existed do not say which aiperf wrote them.
        "loadgen_version": f"aiperf {doc['aiperf_version']}" if doc.get("aiperf_version") else None,
        "started_at": _aware(doc.get("start_time")),
        "finished_at": _aware(doc.get("end_time")),
        "extra": {
            # Kept as written: without an offset we cannot tell which zone they are in.
            "start_time": doc.get("start_time"),
            "end_time": doc.get("end_time"),
            "benchmark_id": doc.get("benchmark_id"),
            "endpoint_type": endpoint.get("type"),
            "streaming": endpoint.get("streaming"),
            "cli_command": shape.cli_command(doc),
            "metrics_without_slot": aside,
            "metrics_not_read": not_read or None,
            # What the run's harness said of it (InferenceX: submission_valid and why not).
            "metadata": doc.get("metadata"),
            **environment_extra,
        },
    }
    return [
        build_document(
            job,
            tool=shape.tool,
            model_stated=shape.model(doc),
            deployment_stated={},
            scenario_stated=scenario,
            points=[drop_none(point)],
            environment=drop_none(environment),
            stopped_early=stopped,
        )
    ]


def _request_counts(doc: dict[str, Any], where: str) -> dict[str, int]:
    """Succeeded, failed and total requests of the profiling phase.

    aiperf's `request_count` counts valid (successful) requests only and
    `error_request_count` the failed ones; `completed_request_count`, where written, is their
    sum ("Completed Requests (Success + Error)", aiperf's CompletedRequestCountMetric), so it
    checks the two and is never read as successes.
    """
    names = ("request_count", "error_request_count", "completed_request_count")
    counts: list[int | None] = []
    for name in names:
        metric = _metric(doc, name, where)
        count = None if metric is None else _expect_unit(metric, name, "requests", where)
        counts.append(None if count is None else int(count))
    ok, errors, completed = counts
    if ok is None and completed is None and errors is None:
        raise ImportFailure(f"{where}: no {', '.join(names)}")
    errors = errors or 0
    if ok is None:
        # No valid request was counted: a run whose every request failed writes no
        # request_count (aiperf counts only what it measured).
        ok = (completed - errors) if completed is not None else 0
    if completed is not None and completed != ok + errors:
        raise ImportFailure(
            f"{where}: completed_request_count is {completed}, but request_count {ok} + "
            f"error_request_count {errors} is {ok + errors}"
        )
    return {"total": ok + errors, "succeeded": ok, "failed": errors}


def _stopped_early(doc: dict[str, Any]) -> str | None:
    """Why the run ended before its plan, in aiperf's words, or None when it ran to its end."""
    said = [
        f"{name}: {str(doc[name]).lower()}"
        for name, stopped in (("was_cancelled", True), ("is_complete", False))
        if doc.get(name) is stopped
    ]
    return f"aiperf reports {' and '.join(said)}" if said else None


def _aware(stamp: Any) -> str | None:
    """An ISO time only when it states its offset; a naive one would be guessed as UTC."""
    if not isinstance(stamp, str):
        return None
    try:
        parsed = datetime.fromisoformat(stamp)
    except ValueError:
        return None
    return stamp if parsed.tzinfo is not None else None


def _errors(summary: Any, where: str) -> dict[str, int]:
    if not isinstance(summary, list):
        raise ImportFailure(f"{where}: error_summary should be a list")
    errors: dict[str, int] = {}
    for item in summary:
        details = item.get("error_details") or {} if isinstance(item, dict) else {}
        name = str(details.get("type") or details.get("code") or "error")[:100]
        errors[name] = errors.get(name, 0) + int(item.get("count", 0))
    return errors


def _value(metrics: dict[str, Any], name: str, unit: str | None = None) -> Any:
    item = metrics.get(name)
    if item is None:
        return None
    if unit == "time":
        return item["value"] * TIME_TO_MS[item["unit"]]
    if unit is not None and item["unit"] != unit:
        raise ImportFailure(f"metric {name} has unit {item['unit']!r}, expected {unit}")
    return item["value"]


def _records(peer: PeerFile, expected: int) -> list[dict[str, Any]]:
    rows = load_jsonl(peer)
    measured = []
    for number_, row in enumerate(rows, start=1):
        where = f"{peer.name} line {number_}"
        if not isinstance(row, dict) or "metadata" not in row:
            raise ImportFailure(f"{where}: not an aiperf per-request record")
        phase = row["metadata"].get("benchmark_phase")
        if phase == "warmup":
            continue
        if phase != "profiling":
            raise ImportFailure(f"{where}: unknown benchmark_phase {phase!r}")
        measured.append((where, row))
    if len(measured) != expected:
        raise ImportFailure(
            f"{peer.name}: {len(measured)} profiling records, but the summary counts {expected} "
            "requests; is it the export of the same run?"
        )
    origin = min(row["metadata"]["request_start_ns"] for _, row in measured)
    out = []
    for i, (where, row) in enumerate(measured):
        metrics = row.get("metrics") or {}
        try:
            out.append(_record(i, row, metrics, origin))
        except (KeyError, TypeError) as exc:
            raise ImportFailure(f"{where}: malformed record ({exc})") from None
    return out


def _record(i: int, row: dict[str, Any], metrics: dict[str, Any], origin: int) -> dict[str, Any]:
    meta = row["metadata"]
    record: dict[str, Any] = {
        "i": i,
        "t_send_ms": (meta["request_start_ns"] - origin) / 1e6,
        "ttft_ms": _value(metrics, "time_to_first_token", "time"),
        "ttfo_ms": _value(metrics, "time_to_first_output_token", "time"),
        "e2el_ms": _value(metrics, "request_latency", "time"),
        "tpot_ms": _value(metrics, "inter_token_latency", "time"),
        "n_in": _value(metrics, "usage_prompt_tokens", "tokens"),
        "n_out": _value(metrics, "usage_completion_tokens", "tokens"),
        "cached": _value(metrics, "usage_prompt_cache_read_tokens", "tokens"),
    }
    gaps = _value(metrics, "inter_chunk_latency")
    if isinstance(gaps, list):
        record["chunks"] = len(gaps) + 1
    error = row.get("error")
    if error:
        code = error.get("code") if isinstance(error, dict) else None
        record["status"] = "http_error" if isinstance(code, int) and code >= 400 else "other"
        if record["status"] == "http_error":
            record["http_status"] = code
        message = error.get("message") if isinstance(error, dict) else error
        record["error"] = str(message)[:500]
    return drop_none(record)


def _records_alone(job: ImportInput) -> list[ResultDocument]:
    return companion_alone(
        job, "this is aiperf's per-request export", "the run's profile_export_aiperf.json"
    )


register(
    Format(
        name="aiperf",
        tool=TOOL,
        summary="aiperf profile_export_aiperf.json (+ profile_export.jsonl via --records)",
        sniff=_sniff,
        parse=parse,
    )
)
register(
    Format(
        name="aiperf-records",
        tool=TOOL,
        summary="aiperf per-request profile_export.jsonl (only as --records of a summary)",
        sniff=_sniff_records,
        parse=_records_alone,
    )
)
