"""vLLM GuideLLM `benchmarks.json` reports (`guidellm benchmark --output-path ...json`).

Reads the GenerativeBenchmarksReport of guidellm 0.5.x (vllm-project/guidellm,
src/guidellm/benchmark/schemas/generative/{report,benchmark,metrics}.py): `args` (target,
model, data ...) and `benchmarks`, one per strategy of a sweep. Each benchmark has
`config.strategy` (type_ synchronous | concurrent(streams) | throughput | constant(rate) |
poisson(rate)), `duration` in seconds, and `metrics`, where every metric is a
StatusDistributionSummary {successful, incomplete, errored, total} of DistributionSummary
(mean, median, mode, variance, std_dev, min, max, count, total_sum, percentiles p001..p999).

Units are in the names: `*_ms` are milliseconds, `request_latency` is seconds (end minus
start), `*_per_second` are rates. We read the `successful` breakdown. Every benchmark
becomes one point of one document.

When --data states no fixed lengths (a file of prompts), the scenario's lengths are the
rounded means of the measured prompt and output token counts over every benchmark's
successful requests, labelled as derived in environment.extra.scenario_lengths.

Also reads report version 2 (guidellm 0.7 and later, checked on reports guidellm 0.8.1
wrote): the run's arguments move from `args` to `config` (a BenchmarkScenario: `spec` with
the backend (target, model), profile, constraints and data, and per-benchmark `benchmarks`
overrides), a `conclusions` list sits beside them, and each benchmark keeps 0.5's
`config.strategy` and metrics, plus scheduling metrics (dispatch and round-trip delays,
turns, SLO attainment) and its `warnings`, which are kept as written. A data source of fixed
synthetic lengths (`{"kind": "synthetic_text", "prompt_tokens": N, "output_tokens": M}` with
no spread) states the scenario's lengths; any other source leaves them to the measured means.

Not mapped (kept in environment.extra): `inter_token_latency_ms` and
`time_per_output_token_ms`, because guidellm weights each request's mean by its token
count (and the latter includes the first token), so their percentiles are not our
per-request TPOT percentiles.
"""

from __future__ import annotations

import json
from typing import Any

from workers.importers.common import (
    ImportInput,
    build_document,
    dataset_name,
    drop_none,
    expect_object,
    load_json,
    object_at,
)
from workers.importers.derived import lengths_from_means
from workers.importers.errors import ImportFailure
from workers.importers.registry import Format, Preview, register
from workers.results import ResultDocument

TOOL = "guidellm 0.5.x (benchmarks.json)"
DERIVED = (
    "rounded means of guidellm's measured prompt_token_count and output_token_count "
    "(successful requests of every benchmark)"
)

TOOL_V2 = "guidellm 0.7 and later (benchmarks.json, report version 2)"
TOP_LEVEL = {"args", "benchmarks", "metadata"}
TOP_LEVEL_V2 = {"config", "benchmarks", "metadata", "conclusions"}
# metadata.version of the GenerativeBenchmarksReport layouts read here (guidellm 0.5 writes 1,
# 0.7 and later 2).
REPORT_VERSION = 1
REPORT_VERSIONS = (1, 2)
# Version 2's scheduling and SLO metrics: what the scheduler did, not a latency of ours.
V2_ASIDE = {
    "request_dispatch_delay",
    "request_scheduled_latency",
    "turn_predecessor_delay",
    "turn_scheduling_delay",
    "root_dispatch_delay",
    "time_to_last_round_trip_ms",
    "avg_round_trip_time_ms",
    "turns",
    "slo_attainment",
    "slo_determined_requests",
    "request_goodput",
}
LATENCY = {
    "time_to_first_token_ms": ("ttft", 1.0),
    "time_to_first_output_token_ms": ("ttfo", 1.0),
    "request_latency": ("e2el", 1000.0),  # seconds
}
RATES = {
    "requests_per_second": "requests_per_s",
    "prompt_tokens_per_second": "input_tok_s",
    "output_tokens_per_second": "output_tok_s",
    "tokens_per_second": "total_tok_s",
}
WEIGHTED_ASIDE = {"inter_token_latency_ms", "time_per_output_token_ms"}
KNOWN_ASIDE = {
    "request_totals",
    "request_concurrency",
    "request_streaming_iterations_count",
    "prompt_token_count",
    "output_token_count",
    "total_token_count",
    "output_tokens_per_iteration",
    "iter_tokens_per_iteration",
    "text",
    "image",
    "video",
    "audio",
    "tool_call",
}


def _sniff(seen: Preview) -> bool:
    row = seen.value
    if not (isinstance(row, dict) and isinstance(row.get("benchmarks"), list)):
        return False
    first = row["benchmarks"][0] if row["benchmarks"] else {}
    if not (isinstance(first, dict) and "metrics" in first):
        return False
    # 0.2/0.3 reports hold only `benchmarks`, 0.7 and later move `args` into `config`: they
    # are sniffed too, so that parse names the version it does not read.
    metadata = object_at(row, "metadata")
    return (
        "args" in row
        or "guidellm_version" in metadata
        or first.get("type_") == "generative_benchmark"
    )


def _successful(metric: Any, name: str, where: str) -> dict[str, Any]:
    if not isinstance(metric, dict) or "successful" not in metric:
        raise ImportFailure(f"{where}: metric {name} has no 'successful' breakdown")
    summary = metric["successful"]
    if summary is None:
        return {}
    return expect_object(summary, f"{where} {name}.successful")


def _distribution(summary: dict[str, Any], factor: float) -> dict[str, float]:
    if not summary or not summary.get("count"):
        return {}
    percentiles = summary.get("percentiles") or {}
    picked = {
        "mean": summary.get("mean"),
        "std": summary.get("std_dev"),
        "min": summary.get("min"),
        "p50": percentiles.get("p50", summary.get("median")),
        "p90": percentiles.get("p90"),
        "p95": percentiles.get("p95"),
        "p99": percentiles.get("p99"),
        "p999": percentiles.get("p999"),
        "max": summary.get("max"),
    }
    return {k: (v if factor == 1.0 else v * factor) for k, v in picked.items() if v is not None}


def _older_layout(report: dict[str, Any]) -> str | None:
    """What an older report looks like, when its benchmarks are not in the 0.5 layout."""
    benchmarks = report.get("benchmarks") or []
    first = benchmarks[0] if benchmarks and isinstance(benchmarks[0], dict) else {}
    if "config" in first:
        return None
    version = (report.get("metadata") or {}).get("guidellm_version")
    if "args" in first or "run_stats" in first:
        # 0.2/0.3 keep each benchmark's strategy in benchmarks[].args.strategy.
        return f"a guidellm {version or '0.2/0.3'} report (benchmarks[].args.strategy, run_stats)"
    return None


def parse(job: ImportInput) -> list[ResultDocument]:
    where = job.main.name
    report = expect_object(load_json(job.main), where)
    older = _older_layout(report)
    if older:
        raise ImportFailure(
            f"{where}: this looks like {older}, which we read as of guidellm 0.5 "
            "(benchmarks[].config.strategy); re-export it with guidellm 0.5 or later"
        )
    metadata = object_at(report, "metadata")
    version = metadata.get("version", REPORT_VERSION)
    if version not in REPORT_VERSIONS:
        keys = ", ".join(sorted(report))
        raise ImportFailure(
            f"{where}: this looks like a guidellm {metadata.get('guidellm_version', '')} "
            f"report of metadata version {version!r} (top-level {keys}), which we do not "
            "read; we read report versions 1 (guidellm 0.5: args) and 2 (guidellm 0.7 and "
            "later: config.spec)"
        )
    if version == 2:
        return _parse_v2(job, report, where)
    unknown = sorted(k for k in report if k not in TOP_LEVEL)
    if unknown:
        raise ImportFailure(f"{where}: unknown field(s) {', '.join(unknown)}")
    benchmarks = report.get("benchmarks") or []
    if not benchmarks:
        raise ImportFailure(f"{where}: the report has no benchmarks")
    args = report.get("args") or {}
    points, arrivals, aside = [], set(), []
    for index, bench in enumerate(benchmarks):
        point, arrival, extra = _point(
            expect_object(bench, f"{where} benchmarks[{index}]"), f"{where} benchmarks[{index}]"
        )
        points.append(point)
        arrivals.add(arrival)
        aside.append(extra)
    scenario: dict[str, Any] = _scenario_from_data(args.get("data"))
    # --data names a file of prompts (or lengths that vary): the lengths the file states are
    # what guidellm measured, so they are derived from its means, not asked.
    derived = None if "input_tokens" in scenario else _measured_lengths(job, benchmarks, where)
    if derived:
        scenario.update(derived[0])
    if len(arrivals) == 1:
        scenario["arrival"] = arrivals.pop()
    else:
        raise ImportFailure(
            f"{where}: the sweep mixes closed-loop and open-loop benchmarks; a run has one "
            "arrival kind, so import a report of one kind"
        )
    environment = {
        "extra": {
            "target": args.get("target"),
            "backend": args.get("backend") or args.get("backend_type"),
            "data": args.get("data"),
            "benchmarks": aside,
        }
    }
    if derived:
        environment["extra"]["scenario_lengths"] = derived[1]
    return [
        build_document(
            job,
            tool=TOOL,
            model_stated=args.get("model"),
            deployment_stated={},
            scenario_stated=scenario,
            points=points,
            environment=environment,
        )
    ]


def _parse_v2(job: ImportInput, report: dict[str, Any], where: str) -> list[ResultDocument]:
    """Report version 2: the run's arguments in `config.spec`, benchmarks as in 0.5."""
    unknown = sorted(k for k in report if k not in TOP_LEVEL_V2)
    if unknown:
        raise ImportFailure(f"{where}: unknown field(s) {', '.join(unknown)}")
    config = expect_object(report.get("config") or {}, f"{where} config")
    spec = expect_object(config.get("spec") or {}, f"{where} config.spec")
    backend = expect_object(spec.get("backend") or {}, f"{where} config.spec.backend")
    benchmarks = report.get("benchmarks") or []
    if not benchmarks:
        raise ImportFailure(f"{where}: the report has no benchmarks")
    points, arrivals, aside = [], set(), []
    for index, bench in enumerate(benchmarks):
        at = f"{where} benchmarks[{index}]"
        point, arrival, extra = _point(expect_object(bench, at), at, V2_ASIDE)
        if bench.get("warnings"):
            extra["warnings"] = bench["warnings"]
        points.append(point)
        arrivals.add(arrival)
        aside.append(extra)
    data = [
        {k: v for k, v in item.items() if v is not None} if isinstance(item, dict) else item
        for item in spec.get("data") or []
    ]
    fixed = data if all(isinstance(d, dict) and d.get("turns") in (None, 1) for d in data) else []
    scenario: dict[str, Any] = _scenario_from_data(fixed)
    derived = None if "input_tokens" in scenario else _measured_lengths(job, benchmarks, where)
    if derived:
        scenario.update(derived[0])
    if len(arrivals) != 1:
        raise ImportFailure(
            f"{where}: the sweep mixes closed-loop and open-loop benchmarks; a run has one "
            "arrival kind, so import a report of one kind"
        )
    scenario["arrival"] = arrivals.pop()
    extra_all: dict[str, Any] = {
        "target": backend.get("target"),
        "backend": backend.get("kind"),
        "data": spec.get("data"),
        "labels": (config.get("metadata") or {}).get("labels") or None,
        "conclusions": report.get("conclusions") or None,
        "guidellm_version": (report.get("metadata") or {}).get("guidellm_version"),
        "benchmarks": aside,
    }
    if derived:
        extra_all["scenario_lengths"] = derived[1]
    return [
        build_document(
            job,
            tool=TOOL_V2,
            model_stated=backend.get("model") or None,
            deployment_stated={},
            scenario_stated=scenario,
            points=points,
            environment={"extra": drop_none(extra_all)},
        )
    ]


def _point(
    bench: dict[str, Any], where: str, aside_metrics: set[str] | frozenset[str] = frozenset()
) -> tuple[dict[str, Any], str, dict[str, Any]]:
    metrics = expect_object(bench.get("metrics"), f"{where} metrics")
    known = set(LATENCY) | set(RATES) | WEIGHTED_ASIDE | KNOWN_ASIDE | set(aside_metrics)
    unknown = sorted(k for k in metrics if k not in known)
    if unknown:
        raise ImportFailure(f"{where}: unknown metric(s) {', '.join(unknown)}")

    latency = {}
    for name, (slot, factor) in LATENCY.items():
        if name in metrics:
            dist = _distribution(_successful(metrics[name], name, where), factor)
            if dist:
                latency[slot] = dist
    throughput = {}
    for name, slot in RATES.items():
        if name in metrics:
            mean = _successful(metrics[name], name, where).get("mean")
            if mean is not None:
                throughput[slot] = mean

    totals = metrics.get("request_totals") or {}
    succeeded = int(totals.get("successful") or 0)
    failed = int(totals.get("errored") or 0) + int(totals.get("incomplete") or 0)
    tokens: dict[str, Any] = {"source": "unknown"}
    for name, slot in (("prompt_token_count", "input"), ("output_token_count", "output")):
        if name in metrics:
            total = _successful(metrics[name], name, where).get("total_sum")
            if total is not None:
                # A float sum of whole counts (1748.9999999999998 in a real report): round,
                # since int() would drop a token.
                tokens[slot] = round(total)

    strategy = ((bench.get("config") or {}).get("strategy")) or {}
    kind = strategy.get("type_")
    point: dict[str, Any] = {
        "label": str(kind)[:100] if kind else None,
        "window_s": bench.get("duration"),
        "requests": {"total": succeeded + failed, "succeeded": succeeded, "failed": failed},
        "tokens": tokens,
        "throughput": throughput,
        "latency_ms": latency,
    }
    if kind == "synchronous":
        point["concurrency"], arrival = 1, "closed"
    elif kind == "concurrent":
        point["concurrency"], arrival = strategy.get("streams"), "closed"
    elif kind == "throughput":
        point["concurrency"], arrival = strategy.get("max_concurrency"), "closed"
    elif kind in ("constant", "poisson"):
        point["request_rate"], arrival = strategy.get("rate"), "open"
    else:
        raise ImportFailure(f"{where}: unknown strategy type {kind!r}")

    extra = {
        name: {
            k: v
            for k, v in _distribution(_successful(metrics[name], name, where), 1.0).items()
            if k in ("mean", "p50", "p99")
        }
        for name in WEIGHTED_ASIDE
        if name in metrics
    }
    if totals.get("incomplete"):
        extra["incomplete_requests"] = totals["incomplete"]
    return drop_none(point), arrival, extra


def _measured_lengths(
    job: ImportInput, benchmarks: list[Any], where: str
) -> tuple[dict[str, int], dict[str, Any]] | None:
    """The mean prompt and output token counts guidellm measured over the successful
    requests of every benchmark, for the lengths neither --data nor the facts state."""
    sums = {"input_tokens": 0.0, "output_tokens": 0.0}
    counts = {"input_tokens": 0, "output_tokens": 0}
    for index, bench in enumerate(benchmarks):
        metrics = (bench or {}).get("metrics") or {}
        for name, slot in (("prompt_token_count", "input_tokens"),
                           ("output_token_count", "output_tokens")):  # fmt: skip
            if name not in metrics:
                continue
            summary = _successful(metrics[name], name, f"{where} benchmarks[{index}]")
            if summary.get("count") and summary.get("total_sum") is not None:
                sums[slot] += summary["total_sum"]
                counts[slot] += summary["count"]
    if not counts["input_tokens"] or counts["input_tokens"] != counts["output_tokens"]:
        return None
    means = {slot: sums[slot] / counts[slot] for slot in sums}
    return lengths_from_means(job, means, counts["input_tokens"], DERIVED)


def _scenario_from_data(data: Any) -> dict[str, Any]:
    """Fixed synthetic lengths stated in --data (e.g. 'prompt_tokens=512,output_tokens=64')."""
    item = data[0] if isinstance(data, list) and len(data) == 1 else data
    config: dict[str, Any] = {}
    if isinstance(item, dict):
        config = item
    elif isinstance(item, str):
        text = item.strip()
        if text.startswith("{"):
            try:
                config = json.loads(text)
            except ValueError:
                config = {}
        elif "=" in text:
            config = dict(part.split("=", 1) for part in text.split(",") if "=" in part)
    spread_keys = [k for k in config if k.endswith(("_stdev", "_min", "_max"))]
    if "prompt_tokens" not in config or "output_tokens" not in config or spread_keys:
        return {}
    try:
        return {
            "input_tokens": int(config["prompt_tokens"]),
            "output_tokens": int(config["output_tokens"]),
            "dataset": dataset_name("synthetic"),
            # guidellm's synthetic data has fixed lengths unless a *_stdev/_min/_max is given.
            "length_spread": 0.0,
        }
    except (TypeError, ValueError):
        return {}


register(
    Format(
        name="guidellm",
        tool=f"{TOOL}; {TOOL_V2}",
        summary="GuideLLM benchmarks.json (one point per benchmark of a sweep)",
        sniff=_sniff,
        parse=parse,
    )
)
