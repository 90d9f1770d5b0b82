"""InferenceX aggregated result files: the per-config JSON its leaderboard is built from.

Two shapes, one reader each, both read from real files (tests/fixtures/wild/SOURCES.md):

`inferencex-agg` reads the single-turn aggregate written by InferenceX's
`utils/process_result.py` (SemiAnalysisAI/InferenceX, e.g. commit bf030960, vLLM v0.21
images): one JSON object per config with hw, conc, image, model, framework, precision,
spec_decoding, disagg, isl, osl, is_multinode, tp, ep, dp_attention, the throughputs PER GPU
(`tput_per_gpu` = total_token_throughput / tp) and latency statistics in SECONDS without a
unit suffix (`median_ttft`, `p99.9_e2el` ...). `*_intvty` are 1/TPOT transforms of the TPOT
statistics (their p90 is below their median), not a distribution; they are kept as written
in environment.extra.

`inferencex-agentic` reads the agentic (multi-turn, `scenario_type: agentic-coding`)
aggregate of `experimental/multiturn` and its forks: the same deployment keys (conc or
`users`), request counts, token totals, throughputs in tokens per second (`*_tput_tps`) over
`duration_seconds`, latency statistics in seconds (`ttlt` is time to last token, our e2el),
and the server's KV-cache hit rate. A file holds one object or an array of them; each
object becomes its own document (key: the file's key plus ':<index>' for arrays).

Deployment facts come from the file, cross-checked against the InferenceX result name when
the file name carries one (`..._int4_vllm_tp8-ep1-dpafalse_disagg-false_spec-mtp_conc4_...`):
the two disagreeing is an error. GPUs are TP (InferenceX divides by TP for per-GPU figures);
disaggregated or multi-node aggregates do not state their GPU pools and are refused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from workers.importers.common import (
    ImportInput,
    build_document,
    drop_none,
    expect_object,
    integer,
    load_json,
    number,
    to_ms,
)
from workers.importers.errors import ImportFailure
from workers.importers.inferencex_rows import (
    RESULT_NAME,
    TIME_METRICS,
    check_known,
    deployment_from_row,
    per_gpu_throughput,
    row_concurrency,
    split_stats,
)
from workers.importers.registry import Format, Preview, register
from workers.results import ResultDocument

AGG_TOOL = "InferenceX process_result.py aggregate (bf030960, 2026)"
AGENTIC_TOOL = "InferenceX multiturn agentic aggregate (e872f86c, 2026)"
DEPLOYMENT_KEYS = {
    "hw",
    "conc",
    "users",
    "image",
    "model",
    "infmax_model_prefix",
    "framework",
    "precision",
    "spec_decoding",
    "disagg",
    "is_multinode",
    "tp",
    "ep",
    "dp_attention",
}
AGG_KEYS = DEPLOYMENT_KEYS | {
    "isl",
    "osl",
    "tput_per_gpu",
    "output_tput_per_gpu",
    "input_tput_per_gpu",
}
# Kept verbatim in environment.extra (their meaning is InferenceX's, not a schema slot).
AGENTIC_EXTRA = (
    "theoretical_cache_hit_rate",
    "theoretical_infinite_cache_hit_rate",
    "server_cpu_cache_hit_rate",
    "kv_offload_bytes_gpu_to_cpu",
    "kv_offload_bytes_cpu_to_gpu",
    "kv_offload_time_gpu_to_cpu",
    "kv_offload_time_cpu_to_gpu",
    "cpu_kv_cache_usage_pct",
    "response_cache_hit_rate",
    "total_requests_completed",
)
AGENTIC_KEYS = DEPLOYMENT_KEYS | {
    *AGENTIC_EXTRA,
    "scenario_type",
    "offloading",
    "offload_mode",
    "num_requests_total",
    "num_requests_successful",
    "server_gpu_cache_hit_rate",
    "total_prompt_tokens",
    "total_generation_tokens",
    "input_tput_tps",
    "output_tput_tps",
    "total_tput_tps",
    "duration_seconds",
    "tput_per_gpu",
    "output_tput_per_gpu",
    "input_tput_per_gpu",
}


def _is_agentic(row: Any) -> bool:
    return isinstance(row, dict) and "scenario_type" in row and "tput_per_gpu" in row


def _sniff_agentic_v2(seen: Preview) -> bool:
    row = seen.value
    return isinstance(row, dict) and "scenario_type" in row and "request_metrics" in row


def _sniff_agg(seen: Preview) -> bool:
    # One config per file, or InferenceX's collected agg_bmk.json (an array of them).
    row = seen.one_or_first
    return isinstance(row, dict) and "tput_per_gpu" in row and "hw" in row and not _is_agentic(row)


def _sniff_agentic(seen: Preview) -> bool:
    return _is_agentic(seen.one_or_first)


class _Stats(NamedTuple):
    """A config's statistics: its latency_ms distributions, and those kept as written."""

    latency: dict[str, dict[str, float]]
    kept: dict[str, dict[str, float]]


def _documents(
    job: ImportInput,
    what: str,
    known: set[str],
    document: Callable[[ImportInput, dict[str, Any], _Stats, int | None, str], ResultDocument],
) -> list[ResultDocument]:
    """One document per config: the file holds one, or InferenceX's collected array of them.

    Each config's keys are checked against `known` before `document` reads it.
    """

    def one(item: Any, index: int | None, where: str) -> ResultDocument:
        row = expect_object(item, where)
        latency, kept, consumed = split_stats(row, where)
        check_known(row, known, consumed, where)
        return document(job, row, _Stats(latency, kept), index, where)

    value = load_json(job.main)
    if not isinstance(value, list):
        return [one(value, None, job.main.name)]
    if not value:
        raise ImportFailure(f"{job.main.name}: the array of {what} results is empty")
    return [one(row, i, f"{job.main.name} item {i}") for i, row in enumerate(value)]


def _document(
    job: ImportInput,
    row: dict[str, Any],
    tool: str,
    deployment: dict[str, Any],
    scenario: dict[str, Any],
    point: dict[str, Any],
    extra: dict[str, Any],
    *,
    index: int | None = None,
    where: str | None = None,
) -> ResultDocument:
    """A config's one-point document. Every InferenceX shape names its model in `model` and
    keeps what has no schema slot in environment.extra, and nothing else in environment."""
    return build_document(
        job,
        tool=tool,
        model_stated=row.get("model"),
        deployment_stated=deployment,
        scenario_stated=scenario,
        points=[point],
        environment={"extra": extra},
        index=index,
        where=where,
    )


def _per_gpu(row: dict[str, Any]) -> dict[str, Any]:
    return {
        k: row[k] for k in ("tput_per_gpu", "output_tput_per_gpu", "input_tput_per_gpu") if k in row
    }


def _described(row: dict[str, Any]) -> dict[str, Any]:
    """What the row says about its own run (hardware, image, model prefix), where stated."""
    return {k: row[k] for k in ("hw", "image", "infmax_model_prefix") if row.get(k)}


# --- single-turn aggregate ---------------------------------------------------------------


def parse_agg(job: ImportInput) -> list[ResultDocument]:
    return _documents(job, "aggregated", AGG_KEYS, _agg_document)


def _agg_document(
    job: ImportInput, row: dict[str, Any], stats: _Stats, index: int | None, where: str
) -> ResultDocument:
    deployment = deployment_from_row(row, job.main.name, where)
    isl = integer(row, "isl", where)
    osl = integer(row, "osl", where)
    scenario: dict[str, Any] = {"arrival": "closed"}
    if isl is not None:
        scenario["input_tokens"] = isl
    if osl is not None:
        scenario["output_tokens"] = osl
    # InferenceX's single-turn benchmark always sends random prompts of these lengths.
    scenario["dataset"] = "random"
    point = {
        "concurrency": row_concurrency(row, job.main.name, where),
        "throughput": per_gpu_throughput(row, deployment["gpus"], where),
        "latency_ms": stats.latency,
    }
    extra: dict[str, Any] = {
        "per_gpu": _per_gpu(row),
        **_described(row),
    }
    if stats.kept:
        extra["statistics_as_written"] = stats.kept
    return _document(
        job, row, AGG_TOOL, deployment, scenario, point, extra, index=index, where=where
    )


# --- agentic aggregate -------------------------------------------------------------------


def _check_agentic_coding(row: dict[str, Any], where: str) -> None:
    """Both agentic shapes are read for the agentic-coding scenario only."""
    scenario_type = row.get("scenario_type")
    if scenario_type != "agentic-coding":
        raise ImportFailure(
            f"{where}: scenario_type {scenario_type!r} is not read; this reader reads "
            "agentic-coding"
        )


def _agentic_scenario(dataset: str, mean_in: float, mean_out: float) -> dict[str, Any]:
    return {
        "name": "agentic-coding",
        "dataset": dataset,
        "arrival": "closed",
        # A multi-turn trace has no fixed lengths; the scenario carries the means it sent.
        "input_tokens": max(1, round(mean_in)),
        "output_tokens": max(1, round(mean_out)),
    }


def parse_agentic(job: ImportInput) -> list[ResultDocument]:
    return _documents(job, "agentic", AGENTIC_KEYS, _agentic_document)


def _agentic_document(
    job: ImportInput, row: dict[str, Any], stats: _Stats, index: int | None, where: str
) -> ResultDocument:
    _check_agentic_coding(row, where)
    deployment = deployment_from_row(row, job.main.name, where)
    offload = row.get("offloading", row.get("offload_mode"))
    if offload not in (None, "none", "off"):
        # KV offloading changes what was served, so it must separate fingerprints.
        deployment["engine_flags"] = [f"kv-offload:{offload}"]

    total = integer(row, "num_requests_total", where)
    ok = integer(row, "num_requests_successful", where)
    requests = None
    if total is not None and ok is not None:
        if ok > total:
            raise ImportFailure(f"{where}: num_requests_successful exceeds num_requests_total")
        requests = {"total": total, "succeeded": ok, "failed": total - ok}
    mean_in = (stats.kept.get("input_tokens") or {}).get("mean")
    mean_out = (stats.kept.get("output_tokens_actual") or {}).get("mean")
    if mean_in is None or mean_out is None:
        raise ImportFailure(f"{where}: missing field(s) mean_input_tokens / mean_output_tokens")
    scenario = _agentic_scenario("agentic-coding", mean_in, mean_out)
    throughput = {
        "input_tok_s": number(row, "input_tput_tps", where),
        "output_tok_s": number(row, "output_tput_tps", where),
        "total_tok_s": number(row, "total_tput_tps", where),
    }
    point: dict[str, Any] = {
        "concurrency": row_concurrency(row, job.main.name, where),
        "window_s": number(row, "duration_seconds", where),
        "requests": requests,
        "tokens": {
            "input": integer(row, "total_prompt_tokens", where),
            "output": integer(row, "total_generation_tokens", where),
            "source": "usage",
        },
        "throughput": drop_none(throughput),
        "latency_ms": stats.latency,
        "prefix_cache_hit_rate": number(row, "server_gpu_cache_hit_rate", where),
    }
    extra: dict[str, Any] = {
        "per_gpu": _per_gpu(row),
        "statistics_as_written": stats.kept,
        **{k: row[k] for k in AGENTIC_EXTRA if row.get(k) is not None},
        **_described(row),
    }
    if offload is not None:
        extra["kv_offload"] = offload
    return _document(
        job,
        row,
        AGENTIC_TOOL,
        deployment,
        scenario,
        drop_none(point),
        extra,
        index=index,
        where=where,
    )


# --- agentic result, nested shape (request_metrics / server_metrics) ---------------------

AGENTIC_V2_TOOL = "InferenceX agentic result, nested (vLLM v0.24 runs, 462f8ed7, 2026)"
AGENTIC_V2_KEYS = DEPLOYMENT_KEYS | {
    "scenario_type",
    "kv_offloading",
    "kv_offload_backend",
    "allocated_cpu_dram_gb",
    "num_requests_total",
    "num_requests_successful",
    "request_accounting",
    "dcp_size",
    "pcp_size",
    "pp",
    "kv_cache_pool_tokens",
    "dataset",
    "request_metrics",
    "server_metrics",
}
V2_SLOTS = {"mean": "mean", "p50": "p50", "p90": "p90", "p95": "p95", "p99": "p99", "std": "std"}


def parse_agentic_v2(job: ImportInput) -> list[ResultDocument]:
    where = job.main.name
    row = expect_object(load_json(job.main), where)
    check_known(row, AGENTIC_V2_KEYS, set(), where)
    _check_agentic_coding(row, where)
    deployment = deployment_from_row(row, job.main.name, where)
    pp = integer(row, "pp", where)
    named = RESULT_NAME.search(job.main.name)
    if pp is not None and named and named["pp"] and int(named["pp"]) != pp:
        raise ImportFailure(f"{where}: field pp is {pp} but the file name says pp{named['pp']}")
    if pp is not None:
        deployment["parallelism"]["pp"] = pp
        deployment["gpus"] = deployment["gpus"] * pp  # TP ranks in each pipeline stage
    flags = [
        f"{name}:{row[key]}"
        for name, key in (("dcp", "dcp_size"), ("pcp", "pcp_size"))
        if isinstance(row.get(key), int) and row[key] > 1
    ]
    offload = row.get("kv_offloading")
    if offload not in (None, "none", "off", ""):
        flags.append(f"kv-offload:{offload}")  # changes what was served: part of the fingerprint
    if flags:
        deployment["engine_flags"] = flags
    metrics = expect_object(row["request_metrics"], f"{where} request_metrics")
    latency_in = expect_object(metrics.get("latency") or {}, f"{where} request_metrics.latency")
    latency: dict[str, dict[str, float]] = {}
    kept: dict[str, dict[str, float]] = {}
    for name, stats in latency_in.items():
        stats = expect_object(stats, f"{where} request_metrics.latency.{name}")
        if name not in TIME_METRICS and name != "intvty":
            raise ImportFailure(f"{where}: unknown latency metric request_metrics.latency.{name}")
        for stat, value in stats.items():
            value = number(stats, stat, f"{where} request_metrics.latency.{name}")
            if name in TIME_METRICS and stat in V2_SLOTS and value is not None:
                latency.setdefault(TIME_METRICS[name], {})[V2_SLOTS[stat]] = to_ms(value, "s")
            elif value is not None:
                kept.setdefault(name, {})[stat] = value
    tokens = metrics.get("tokens") or {}
    mean_in = (tokens.get("input") or {}).get("mean")
    mean_out = (tokens.get("output_actual") or {}).get("mean")
    if not mean_in or not mean_out:
        raise ImportFailure(
            f"{where}: missing field(s) request_metrics.tokens.input.mean / output_actual.mean"
        )
    dataset = (row.get("dataset") or {}).get("loader") or "agentic-coding"
    scenario = _agentic_scenario(str(dataset), mean_in, mean_out)
    throughput_in = metrics.get("throughput") or {}
    throughput = {
        ours: (throughput_in.get(theirs) or {}).get("tokens_per_second")
        for ours, theirs in (
            ("input_tok_s", "input"),
            ("output_tok_s", "output"),
            ("total_tok_s", "total"),
        )
    }
    ok = integer(row, "num_requests_successful", where)
    accounting = row.get("request_accounting") or {}
    errors = accounting.get("records_error_dropped")
    requests = None
    if ok is not None and isinstance(errors, int):
        # Warm-up records are dropped, not failed: they are not counted as requests.
        requests = {"total": ok + errors, "succeeded": ok, "failed": errors}
    cache = ((row.get("server_metrics") or {}).get("cache")) or {}
    point = {
        "concurrency": row_concurrency(row, job.main.name, where),
        "window_s": throughput_in.get("duration_seconds"),
        "requests": requests,
        "throughput": drop_none(throughput),
        "latency_ms": latency,
        "prefix_cache_hit_rate": cache.get("gpu_cache_hit_rate"),
    }
    extra = {
        "statistics_as_written": kept,
        "token_statistics": tokens,
        "per_gpu": throughput_in.get("per_gpu"),
        "request_accounting": accounting,
        "server_metrics": row.get("server_metrics"),
        "kv_cache_pool_tokens": row.get("kv_cache_pool_tokens"),
        "theoretical_cache_hit_rate": (metrics.get("cache") or {}).get(
            "theoretical_cache_hit_rate"
        ),
        **_described(row),
    }
    return [
        _document(
            job,
            row,
            AGENTIC_V2_TOOL,
            deployment,
            scenario,
            drop_none(point),
            drop_none(extra),
        )
    ]


register(
    Format(
        name="inferencex-agentic-v2",
        tool=AGENTIC_V2_TOOL,
        summary="InferenceX agentic result with nested request_metrics / server_metrics",
        sniff=_sniff_agentic_v2,
        parse=parse_agentic_v2,
    )
)
register(
    Format(
        name="inferencex-agg",
        tool=AGG_TOOL,
        summary="InferenceX single-turn aggregate (per-GPU throughput, latencies in seconds)",
        sniff=_sniff_agg,
        parse=parse_agg,
    )
)
register(
    Format(
        name="inferencex-agentic",
        tool=AGENTIC_TOOL,
        summary="InferenceX agentic (multi-turn) aggregate, one object or an array",
        sniff=_sniff_agentic,
        parse=parse_agentic,
    )
)
