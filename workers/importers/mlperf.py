"""MLPerf LoadGen `mlperf_log_summary.txt` of an LLM benchmark's Server or Interactive
scenario (LoadGen 4.x/5.x, as in mlcommons/inference_results_v4.1).

LoadGen issues queries at `target_qps` (Poisson arrivals) and times each: the summary states
the completed samples and tokens per second, percentiles of the end-to-end latency, of the
first token ("first token latency") and of the time per output token ("time to output
token"), all in nanoseconds, and the scenario's constraints (`ttft_latency`, `tpot_latency`,
both at the 99th percentile), which become the run's SLO. Its "tokens" are generated tokens
(MLPerf's LLM rules), so the token rate is output tok/s.

It states no model, hardware or engine (they are in the submission's folder names and
system JSON), no prompt lengths and no request counts: the model and deployment are asked,
the input length is asked, and the output length is derived as tokens per second over
samples per second (the mean output of a completed sample), labelled as derived.
Other scenarios and non-LLM summaries are refused by name (why_unread).
"""

from __future__ import annotations

from typing import Any

from workers.importers.common import ImportInput, build_document, decode_text
from workers.importers.derived import lengths_from_means
from workers.importers.errors import ImportFailure
from workers.importers.mlperf_summary import TOKENS, fields, is_summary, why_unread
from workers.importers.registry import Format, Preview, register
from workers.results import ResultDocument

TOOL = "MLPerf LoadGen 4.1 (mlperf_log_summary.txt, Server/Interactive)"
NS_PER_MS = 1_000_000
# The summary's name for each distribution -> our latency slot.
DISTRIBUTIONS = {
    "latency": "e2el",
    "first token latency": "ttft",
    "time to output token": "tpot",
}
# LoadGen's percentile label -> our slot; 97.00 has none and is kept aside.
PERCENTILES = {"50.00": "p50", "90.00": "p90", "95.00": "p95", "99.00": "p99", "99.90": "p999"}
SUMMARY_STATS = {"Min": "min", "Max": "max", "Mean": "mean"}
DERIVED = (
    "Completed tokens per second / Completed samples per second: the mean output tokens of a "
    "completed sample"
)


def _sniff(seen: Preview) -> bool:
    return is_summary(seen.text) and why_unread(seen.text) is None


def _number(stated: dict[str, str], key: str, where: str) -> float:
    try:
        return float(stated[key])
    except KeyError:
        raise ImportFailure(f"{where}: the summary has no '{key}' line") from None
    except ValueError:
        raise ImportFailure(f"{where}: '{key}' is {stated[key]!r}, not a number") from None


def _distribution(
    stated: dict[str, str], name: str, where: str, aside: dict[str, float]
) -> dict[str, float] | None:
    """One distribution in ms from its lines, whatever their capitalisation."""
    lowered = {key.lower(): key for key in stated}
    out: dict[str, float] = {}
    for word, slot in SUMMARY_STATS.items():
        key = lowered.get(f"{word} {name} (ns)".lower())
        if key:
            out[slot] = _number(stated, key, where) / NS_PER_MS
    for label, slot in PERCENTILES.items():
        key = lowered.get(f"{label} percentile {name} (ns)")
        if key:
            out[slot] = _number(stated, key, where) / NS_PER_MS
    kept = lowered.get(f"97.00 percentile {name} (ns)")
    if kept:
        aside[f"p97 {name} (ms)"] = _number(stated, kept, where) / NS_PER_MS
    return out or None


def parse(job: ImportInput) -> list[ResultDocument]:
    where = job.main.name
    text = decode_text(job.main)
    why = why_unread(text) if is_summary(text) else "not one"
    if why:
        raise ImportFailure(f"{where}: not a summary this reader reads: {why}")
    stated = fields(text)
    repeated = sorted(key for key in stated if key.endswith("#2"))
    if repeated:
        raise ImportFailure(f"{where}: '{repeated[0][:-2]}' is stated twice with two values")
    if stated.get("Mode") != "PerformanceOnly":
        raise ImportFailure(
            f"{where}: Mode is {stated.get('Mode')!r}: only a PerformanceOnly summary has "
            "performance figures"
        )

    samples_s = _number(stated, "Completed samples per second", where)
    tokens_s = _number(stated, TOKENS, where)
    aside: dict[str, Any] = {}
    latency = {}
    for name, slot in DISTRIBUTIONS.items():
        dist = _distribution(stated, name, where, aside)
        if dist:
            latency[slot] = dist
    point: dict[str, Any] = {
        "request_rate": _number(stated, "target_qps", where),
        "throughput": {"requests_per_s": samples_s, "output_tok_s": tokens_s},
        "latency_ms": latency,
    }

    # The scenario's latency constraints (0: none set) are its SLO, at LoadGen's p99.
    limits_ns = {
        metric: _number(stated, key, where)
        for metric, key in (("ttft", "ttft_latency (ns)"), ("tpot", "tpot_latency (ns)"))
    }
    bounds = [
        {"metric": metric, "percentile": "p99", "limit": limit / NS_PER_MS, "unit": "ms"}
        for metric, limit in limits_ns.items()
        if limit > 0
    ]
    scenario: dict[str, Any] = {"arrival": "open", "dataset": "mlperf"}
    if bounds:
        scenario["slo"] = {"bounds": bounds}
    extra: dict[str, Any] = {
        "mlperf": {
            key: stated[key]
            for key in (
                "SUT name",
                "Scenario",
                "Result is",
                "Performance constraints satisfied",
                "Scheduled samples per second",
                "min_duration (ms)",
                "min_query_count",
                "performance_sample_count",
            )
            if key in stated
        },
        "not_mapped": aside,
    }
    # The mean output of a completed sample; the summary states rates, not a sample count.
    means = {"output_tokens": tokens_s / samples_s if samples_s > 0 else None}
    derived = lengths_from_means(job, means, None, DERIVED)
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
            points=[point],
            environment={"extra": extra},
        )
    ]


register(
    Format(
        name="mlperf-loadgen",
        tool=TOOL,
        summary="MLPerf LoadGen mlperf_log_summary.txt, LLM Server/Interactive scenario",
        sniff=_sniff,
        parse=parse,
    )
)
