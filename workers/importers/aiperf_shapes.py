"""The export layouts aiperf has written (schema 1.4, 1.3, 1.1 and unversioned) and how each
states its scenario, its model and its metrics.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from workers.importers.common import dataset_name
from workers.importers.errors import ImportFailure

TOOL = "aiperf 0.13.0 (export schema 1.4)"
TOOL_V11 = "aiperf 0.8.0 (export schema 1.1)"

TOP_LEVEL = {
    "schema_version",
    "aiperf_version",
    "benchmark_id",
    "input_config",
    "run_info",
    "was_cancelled",
    "is_complete",
    "error_summary",
    "start_time",
    "end_time",
    "warmup_metrics",
}
# Known 0.13.0 metrics that have no place in a result document; kept (avg and unit) in
# environment.extra so nothing the file measured disappears.
# adj_*: aiperf 0.8's adjusted counterparts of metrics we map, kept as written beside them.
KEPT_ASIDE_PREFIXES = ("http_req_", "effective_", "active_", "usage_", "adj_")
KEPT_ASIDE = {
    "time_to_second_token",
    "output_sequence_length",
    "input_sequence_length",
    "output_token_count",
    "prefill_throughput_per_user",
    "decode_duration",
    "e2e_output_token_throughput",
    "osl_mismatch_diff_pct",
    "osl_mismatch_count",
    "usage_discrepancy_count",
    "tokens_in_flight",
    "credit_to_start_latency",
    "effective_latency",
}


@dataclass(frozen=True)
class Shape:
    """How one export schema states its configuration; metrics read alike in all."""

    tool: str
    top_level: frozenset[str]
    kept_aside: frozenset[str]
    scenario: Callable[[dict[str, Any], str], tuple[dict[str, Any], dict[str, Any]]]
    model: Callable[[dict[str, Any]], str | None]
    cli_command: Callable[[dict[str, Any]], str | None]


def _scenario_v14(doc: dict[str, Any], where: str) -> tuple[dict[str, Any], dict[str, Any]]:
    config = doc.get("input_config") or {}
    phases = config.get("phases") or []
    profiling = [p for p in phases if p.get("kind") == "profiling"]
    if len(profiling) != 1:
        raise ImportFailure(f"{where}: expected one profiling phase, found {len(profiling)}")
    phase = profiling[0]
    scenario: dict[str, Any] = {}
    if phase.get("type") == "concurrency":
        scenario["arrival"] = "closed"
    elif phase.get("type") in ("constant", "poisson") and phase.get("rate"):
        # A rate schedules arrivals; a concurrency, if set, only caps them.
        scenario["arrival"] = "open"
    else:
        raise ImportFailure(f"{where}: unknown profiling phase type {phase.get('type')!r}")
    if phase.get("requests"):
        scenario["request_count"] = phase["requests"]
    warmups = [p for p in phases if p.get("kind") == "warmup"]
    scenario["warmup_requests"] = sum(int(p.get("requests") or 0) for p in warmups)
    datasets = config.get("datasets") or []
    if len(datasets) == 1:
        dataset = datasets[0]
        scenario["dataset"] = dataset_name(str(dataset.get("type") or dataset.get("name")))
        prompts = dataset.get("prompts") or {}
        isl, osl = prompts.get("isl") or {}, prompts.get("osl") or {}
        if isl.get("stddev") == 0 and osl.get("stddev") == 0:
            # Fixed lengths; a nonzero stddev is a normal spread our scenario cannot state.
            scenario["input_tokens"] = int(isl["mean"])
            scenario["output_tokens"] = int(osl["mean"])
            scenario["length_spread"] = 0.0  # stated: both stddevs are 0
    return scenario, phase


def _model_v14(doc: dict[str, Any]) -> str | None:
    models = ((doc.get("input_config") or {}).get("models") or {}).get("items") or []
    return models[0].get("name") if len(models) == 1 and isinstance(models[0], dict) else None


def _scenario_v13(doc: dict[str, Any], where: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """aiperf 0.10 (schema 1.3): the 1.4 layout, but a phase is known by its name (no
    `kind`), and a dataset read from a file (`type` "file") states its `format`, not lengths."""
    config = doc.get("input_config") or {}
    phases = [{"kind": p.get("name"), **p} for p in config.get("phases") or []]
    scenario, phase = _scenario_v14({**doc, "input_config": {**config, "phases": phases}}, where)
    datasets = config.get("datasets") or []
    if len(datasets) == 1 and datasets[0].get("type") == "file" and datasets[0].get("format"):
        scenario["dataset"] = dataset_name(str(datasets[0]["format"]))
    return scenario, phase


def _scenario_v11(doc: dict[str, Any], where: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """aiperf 0.8: input_config.loadgen holds concurrency / request_rate / request_count."""
    config = doc.get("input_config") or {}
    loadgen = config.get("loadgen") or {}
    source = config.get("input") or {}
    concurrency, rate = loadgen.get("concurrency"), loadgen.get("request_rate")
    phase = {"concurrency": concurrency, "rate": rate}
    scenario: dict[str, Any] = {}
    if rate:
        scenario["arrival"] = "open"  # settled against the achieved rate by the caller
    elif concurrency:
        scenario["arrival"] = "closed"
    else:
        raise ImportFailure(f"{where}: input_config.loadgen states neither concurrency nor rate")
    if loadgen.get("request_count"):
        scenario["request_count"] = loadgen["request_count"]
    if loadgen.get("warmup_request_count") is not None:
        scenario["warmup_requests"] = loadgen["warmup_request_count"]
    trace = source.get("public_dataset") or source.get("custom_dataset_type")
    prompts = source.get("prompt") or {}
    isl = (prompts.get("input_tokens") or {}) if isinstance(prompts, dict) else {}
    osl = (prompts.get("output_tokens") or {}) if isinstance(prompts, dict) else {}
    if trace:
        scenario["dataset"] = dataset_name(str(trace))  # its lengths: aiperf.py's means
    elif isl.get("mean") and osl.get("mean") and not isl.get("stddev") and not osl.get("stddev"):
        scenario["dataset"] = dataset_name("synthetic")
        scenario["input_tokens"] = int(isl["mean"])
        scenario["output_tokens"] = int(osl["mean"])
        if isl.get("stddev") == 0 and osl.get("stddev") == 0:
            scenario["length_spread"] = 0.0  # stated; a missing stddev leaves it unstated
    return scenario, phase


def _model_v11(doc: dict[str, Any]) -> str | None:
    names = ((doc.get("input_config") or {}).get("endpoint") or {}).get("model_names") or []
    return names[0] if len(names) == 1 else None


SHAPES = {
    "1.4": (
        V14 := Shape(
            tool=TOOL,
            top_level=frozenset(TOP_LEVEL),
            kept_aside=frozenset(KEPT_ASIDE),
            scenario=_scenario_v14,
            model=_model_v14,
            cli_command=lambda doc: (doc.get("run_info") or {}).get("cli_command"),
        )
    ),
    # aiperf 0.10.0 (checked on real files): 1.4's config layout, telemetry at the top.
    "1.3": replace(
        V14,
        tool="aiperf 0.10.0 (export schema 1.3)",
        top_level=frozenset(TOP_LEVEL | {"telemetry_data"}),
        scenario=_scenario_v13,
    ),
    "1.1": (
        V11 := Shape(
            tool=TOOL_V11,
            top_level=frozenset(TOP_LEVEL | {"telemetry_data", "branch_stats", "metadata"}),
            kept_aside=frozenset(
                KEPT_ASIDE
                | {
                    "min_request_timestamp",
                    "max_response_timestamp",
                    "requested_osl",
                    "context_overflow_count",
                    "credit_drop_latency",
                    "theoretical_prefix_cache_hit",
                }
            ),
            scenario=_scenario_v11,
            model=_model_v11,
            cli_command=lambda doc: (doc.get("input_config") or {}).get("cli_command"),
        )
    ),
    # Later 0.8.0 builds write 1.2 with the same config layout (checked on real files).
    "1.2": replace(V11, tool="aiperf 0.8.0 (export schema 1.2)"),
    # Earlier 0.8.0 builds write 1.0, also that layout (checked on real files); their errored
    # requests' prompt lengths are metrics of their own.
    "1.0": replace(
        V11,
        tool="aiperf 0.8.0 (export schema 1.0)",
        kept_aside=V11.kept_aside | {"error_isl", "total_error_isl"},
    ),
}
# Exports from before schema_version (aiperf's own plot fixtures, 2025) share the 0.8 config
# layout and add a few metrics of their own.
UNVERSIONED = replace(
    V11,
    tool="aiperf before 0.8 (export without schema_version)",
    kept_aside=V11.kept_aside
    | {
        "goodput",
        "good_request_count",
        "reasoning_token_count",
        "total_reasoning_tokens",
        "error_isl",
        "total_error_isl",
        "prefill_throughput",
    },
)
