"""Pieces shared by vLLM `bench serve` and sglang `bench_serving` results (both `*_ms` keys)."""

from __future__ import annotations

import re
from typing import Any

from workers.importers.common import integer, number, stat_fields, to_ms
from workers.importers.errors import ImportFailure
from workers.slo import STAT_SLOTS

# What benchmark_serving.py has written since its first versions, and `vllm bench serve` and
# InferenceX's vendored copy still write: the run's header and totals.
SERVING_KEYS = {
    "date",
    "model_id",
    "tokenizer_id",
    "num_prompts",
    "request_rate",
    "burstiness",
    "max_concurrency",
    "duration",
    "completed",
    "total_input_tokens",
    "total_output_tokens",
    "request_throughput",
    "request_goodput",
    "output_throughput",
}

# '<stat>_<metric>_ms': the `_ms` suffix is how both tools state the unit.
STAT_KEY = re.compile(r"^(mean|median|std|min|max|p\d+(?:\.\d+)?)_([a-z0-9_]+)_ms$")


def latency_stats(
    row: dict[str, Any], metrics: dict[str, str], where: str
) -> tuple[dict[str, dict[str, float]], dict[str, float], set[str]]:
    """(latency_ms distributions, statistics without a slot, keys consumed).

    `metrics` maps the tool's metric name (ttft, e2e_latency ...) to ours (ttft, e2el ...).
    Percentiles our schema has no slot for (p25, p75 ...) are returned apart so the caller
    can keep them rather than drop them.
    """
    latency: dict[str, dict[str, float]] = {}
    unslotted: dict[str, float] = {}
    consumed: set[str] = set()
    for key, stat, metric in stat_fields(row, STAT_KEY):
        if metric not in metrics:
            raise ImportFailure(f"{where}: unknown latency field {key}")
        consumed.add(key)
        value = to_ms(number(row, key, where), "ms")
        if value is None:
            continue
        slot = STAT_SLOTS.get(stat)
        if slot is None:
            unslotted[key] = value
        else:
            latency.setdefault(metrics[metric], {})[slot] = value
    return latency, unslotted, consumed


def token_totals(row: dict[str, Any], where: str) -> dict[str, Any]:
    """The run's token totals. Prompts are counted with the local tokenizer and outputs from
    usage where the server reports it: mixed sources (stated in environment.extra.token_sources
    where the importer knows them), so neither label fits."""
    return {
        "input": integer(row, "total_input_tokens", where),
        "output": integer(row, "total_output_tokens", where),
        "source": "unknown",
    }


# The --save-detailed / --output-details per-request arrays, one entry a request.
REQUEST_LISTS = ("input_lens", "output_lens", "ttfts", "itls", "errors")


def request_lists(row: dict[str, Any], where: str) -> dict[str, list[Any]] | None:
    """The --save-detailed / --output-details arrays, checked for equal length."""
    present = [n for n in REQUEST_LISTS if n in row]
    if not present:
        return None
    missing = [n for n in REQUEST_LISTS if n not in row]
    if missing:
        raise ImportFailure(f"{where}: per-request arrays incomplete, missing {', '.join(missing)}")
    lists = {n: row[n] for n in REQUEST_LISTS}
    if "start_times" in row:
        lists["start_times"] = row["start_times"]
    lengths = {n: len(v) if isinstance(v, list) else -1 for n, v in lists.items()}
    if len(set(lengths.values())) != 1 or -1 in lengths.values():
        raise ImportFailure(f"{where}: per-request arrays differ in length: {lengths}")
    return lists


def records(lists: dict[str, list[Any]], where: str) -> list[dict[str, Any]] | None:
    """Per-request records from the detailed arrays (ttfts and itls are in seconds).

    Both tools store `time.perf_counter()` differences in seconds in these arrays, unlike
    their `*_ms` summaries. A record needs its send time; the arrays carry one only when
    `start_times` is present (seconds, perf_counter), so without it no records are made.
    """
    starts = lists.get("start_times")
    if starts is None:
        return None
    origin = min(starts)
    out = []
    for i, (start, n_in, n_out, ttft, itl, error) in enumerate(
        zip(
            starts,
            lists["input_lens"],
            lists["output_lens"],
            lists["ttfts"],
            lists["itls"],
            lists["errors"],
            strict=True,
        )
    ):
        failed = bool(error)
        record: dict[str, Any] = {
            "i": i,
            "t_send_ms": to_ms(start - origin, "s"),
            "n_in": n_in,
            "status": "other" if failed else "ok",
        }
        if failed:
            record["error"] = str(error)[:500]
        else:
            record["n_out"] = n_out
            record["ttft_ms"] = to_ms(ttft, "s")
            record["e2el_ms"] = to_ms(ttft + sum(itl), "s")
            if n_out and n_out > 1:
                record["tpot_ms"] = to_ms(sum(itl) / (n_out - 1), "s")
        out.append(record)
    return out


def counts_from_lists(lists: dict[str, list[Any]]) -> dict[str, int]:
    total = len(lists["errors"])
    failed = sum(1 for e in lists["errors"] if e)
    return {"total": total, "succeeded": total - failed, "failed": failed}
