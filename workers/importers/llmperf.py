"""Ray's llmperf: `<model>_<in>_<out>_summary.json` and `..._individual_responses.json`.

Reads results version "2023-08-31" (the only one `token_benchmark_ray.py` in
ray-project/llmperf writes; checked on the raw data of ray-project/llmperf-leaderboard).

The summary is one flat object (`LLMPerfResults.to_dict` flattens nested dicts): the
requested load (model, mean/stddev of input and output tokens, num_concurrent_requests,
additional_sampling_params_*), `results_<metric>_<stat>` for each per-request metric
(quantiles p25..p99, mean, min, max, stddev; times in SECONDS, `_s` in the name), the
counts (num_requests_started, num_completed_requests, number_errors) and two rates,
output tokens per second and completed requests per MINUTE, over the run's wall time.
`--metadata key=value` pairs land beside them as strings. Statistics cover successful
requests only (error_code is null).

The individual-responses file is a JSON array, one object per request with the same
per-request metrics and error_code / error_msg; it holds no send times, so it gives no
records and no throughput. Its latency distributions are computed here from those values
(linear percentiles, as our own worker computes them) and say so in `method`.

Also reads such summaries collected in one JSON object keyed by concurrency ({"1": {...},
"2": {...}}, as philschmid/llmperf-bench's *_results.json holds them): one document whose
points are the concurrencies, each read as a summary is; each key must be its summary's
num_concurrent_requests.

Also reads the condensed form of those sweeps (llmperf-bench's *_summary.json, main.py's
`detailed_results`): an object keyed by concurrency whose values keep five figures of each
summary: `input_token_length` / `output_token_length` (the requested mean_input_tokens /
mean_output_tokens), `first-time-to-token_mean_in_ms` (results_ttft_s_mean x 1000),
`throughput_token_per_s` (results_mean_output_throughput_token_per_s: output tokens over the
run's wall time) and `latency_ms_per_token` (results_inter_token_latency_s_mean x 1000, kept
as written below). It states no request counts and no model (the file name spells it with
'/' as '_', which is not read back).

Not mapped, kept in environment.extra: `inter_token_latency_s`, which llmperf computes as
the sum of every gap including TTFT divided by the streamed chunks (end-to-end time per
chunk, not our TPOT), and `request_output_throughput_token_per_s` (tokens over end-to-end
time, not 1/TPOT). Token counts are llmperf's own Llama-tokenizer counts, not usage.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from workers import slo
from workers.importers.common import (
    ImportInput,
    build_document,
    check_keys,
    drop_none,
    expect_object,
    integer,
    load_json,
    number,
    to_ms,
)
from workers.importers.derived import derived_lengths
from workers.importers.errors import ImportFailure
from workers.importers.registry import Format, Preview, register
from workers.loadgen.metrics import distribution
from workers.results import ResultDocument

VERSIONS = ("2023-08-31",)
TOOL = "llmperf (results version 2023-08-31)"
# token_benchmark_ray.py always samples its prompts from Shakespeare's sonnets (sonnet.txt).
DATASET = "sonnet"
DERIVED = "rounded means of the successful requests' measured token counts"

SETUP = {
    "version",
    "name",
    "model",
    "mean_input_tokens",
    "stddev_input_tokens",
    "mean_output_tokens",
    "stddev_output_tokens",
    "num_concurrent_requests",
    "timestamp",
}
PER_REQUEST = (
    "inter_token_latency_s",
    "ttft_s",
    "end_to_end_latency_s",
    "request_output_throughput_token_per_s",
    "number_input_tokens",
    "number_output_tokens",
)
LATENCY = {"ttft_s": "ttft", "end_to_end_latency_s": "e2el"}
STAT_KEY = re.compile(
    r"^results_(?P<metric>" + "|".join(PER_REQUEST) + r")_"
    r"(?P<stat>quantiles_p\d+|mean|min|max|stddev)$"
)
# llmperf spells its statistics `stddev` and `quantiles_pNN`; the slots are slo.py's.
STAT_SLOTS = {
    "stddev": "std",
    **{name: slot for name, slot in slo.STAT_SLOTS.items() if name in {"mean", "min", "max"}},
    **{f"quantiles_{name}": slot for name, slot in slo.PERCENTILES.items()},
}
COUNTS = {
    "results_num_requests_started",
    "results_error_rate",
    "results_number_errors",
    "results_error_code_frequency",
    "results_mean_output_throughput_token_per_s",
    "results_num_completed_requests",
    "results_num_completed_requests_per_min",
}
# str() of a pandas value_counts dict: '{429.0: 130}', '{-100.0: 49}', '{}'.
FREQUENCY = re.compile(r"(-?\d+(?:\.\d+)?)\s*:\s*(\d+)")
RESPONSE_KEYS = {
    "error_code",
    "error_msg",
    "number_total_tokens",
    *PER_REQUEST,
}
# The leaderboard's Bedrock runs keep each response's text; it is not a measurement.
RESPONSE_TEXT = "GEN_TEXT"
COMPUTED = "linear, computed by inferboard from the file's per-request values"


def _sniff_summary(seen: Preview) -> bool:
    row = seen.value
    return (
        isinstance(row, dict)
        and "num_concurrent_requests" in row
        and any(str(k).startswith("results_") for k in row)
    )


def _sniff_sweep(seen: Preview) -> bool:
    row = seen.value
    if not (isinstance(row, dict) and row and all(isinstance(v, dict) for v in row.values())):
        return False
    first = next(iter(row.values()))
    return "num_concurrent_requests" in first and any(str(k).startswith("results_") for k in first)


CONDENSED = {
    "concurrency",
    "input_token_length",
    "output_token_length",
    "first-time-to-token_mean_in_ms",
    "throughput_token_per_s",
    "latency_ms_per_token",
}


def _sniff_condensed(seen: Preview) -> bool:
    row = seen.value
    if not (isinstance(row, dict) and row and all(isinstance(v, dict) for v in row.values())):
        return False
    return "first-time-to-token_mean_in_ms" in next(iter(row.values()))


def _sniff_responses(seen: Preview) -> bool:
    row = seen.first_item
    return isinstance(row, dict) and {"error_code", "ttft_s", "end_to_end_latency_s"} <= set(row)


def _version(row: dict[str, Any], where: str) -> None:
    version = row.get("version")
    if version not in VERSIONS:
        raise ImportFailure(
            f"{where}: this looks like an llmperf summary of results version {version!r}, "
            f"which we do not read (we read {', '.join(VERSIONS)})"
        )


def _stat(row: dict[str, Any], key: str, where: str) -> float | None:
    value = row.get(key)
    if isinstance(value, float) and math.isnan(value):
        # pandas writes NaN for a statistic over no successful request: not stated.
        return None
    return number(row, key, where)


def parse_summary(job: ImportInput) -> list[ResultDocument]:
    where = job.main.name
    row = expect_object(load_json(job.main, allow_nonfinite=True), where)
    point, scenario, extra = _summary(row, where)
    return [
        build_document(
            job,
            tool=TOOL,
            model_stated=row.get("model"),
            deployment_stated={},
            scenario_stated=scenario,
            points=[point],
            environment={"extra": extra},
        )
    ]


def parse_sweep(job: ImportInput) -> list[ResultDocument]:
    """Summaries collected in one object keyed by concurrency ({"1": {...}, "2": {...}}),
    as llmperf-bench's *_results.json writes them: one run of one scenario whose points are
    the concurrencies, or one document per scenario when the summaries differ in it."""
    where = job.main.name
    keyed = expect_object(load_json(job.main, allow_nonfinite=True), where)
    groups: dict[str, tuple[dict[str, Any], str | None, list[dict], list[dict]]] = {}
    for key, value in keyed.items():
        at = f"{where} [{key!r}]"
        point, scenario, extra = _summary(expect_object(value, at), at)
        if str(point.get("concurrency")) != str(key):
            raise ImportFailure(
                f"{at}: num_concurrent_requests is {point.get('concurrency')}, not its key"
            )
        model = value.get("model")
        group = json.dumps([scenario, model], sort_keys=True)
        groups.setdefault(group, (scenario, model, [], []))
        groups[group][2].append(point)
        groups[group][3].append({"key": key, **extra})
    if not groups:
        raise ImportFailure(f"{where}: the object holds no summaries")
    many = len(groups) > 1
    documents = []
    for index, (scenario, model, points, extras) in enumerate(groups.values()):
        documents.append(
            build_document(
                job,
                tool=f"{TOOL}, summaries keyed by concurrency",
                model_stated=model,
                deployment_stated={},
                scenario_stated=scenario,
                points=points,
                environment={"extra": {"summaries": extras}},
                index=index if many else None,
            )
        )
    return documents


def parse_condensed(job: ImportInput) -> list[ResultDocument]:
    """The condensed sweep: one document whose points are the concurrencies."""
    where = job.main.name
    keyed = expect_object(load_json(job.main), where)
    if not keyed:
        raise ImportFailure(f"{where}: the object holds no summaries")
    points, lengths, aside = [], set(), {}
    for key, value in keyed.items():
        at = f"{where} [{key!r}]"
        row = expect_object(value, at)
        check_keys(row, CONDENSED, at, required=CONDENSED)
        concurrency = integer(row, "concurrency", at)
        if str(concurrency) != str(key):
            raise ImportFailure(f"{at}: concurrency is {concurrency}, not its key")
        asked = ("input_token_length", "output_token_length")
        lengths.add(tuple(integer(row, name, at) for name in asked))
        ttft = number(row, "first-time-to-token_mean_in_ms", at)
        points.append(
            drop_none(
                {
                    "concurrency": concurrency,
                    "throughput": drop_none(
                        {"output_tok_s": number(row, "throughput_token_per_s", at)}
                    ),
                    "latency_ms": {} if ttft is None else {"ttft": {"mean": ttft}},
                }
            )
        )
        aside[key] = {"latency_ms_per_token": number(row, "latency_ms_per_token", at)}
    if len(lengths) != 1:
        raise ImportFailure(
            f"{where}: the summaries ask for different lengths {sorted(lengths)}; a run has one "
            "scenario, so import one file per length"
        )
    [(input_tokens, output_tokens)] = lengths
    scenario = drop_none(
        {
            "arrival": "closed",
            "dataset": DATASET,
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
        }  # fmt: skip
    )
    extra = {
        # llmperf's inter-token latency (every gap, TTFT included, over the chunks), not TPOT.
        "inter_token_latency_mean_ms_by_concurrency": aside,
        "token_source": "llmperf's Llama tokenizer (hf-internal-testing/llama-tokenizer)",
    }
    return [
        build_document(
            job,
            tool=f"{TOOL}, condensed summaries keyed by concurrency",
            model_stated=None,
            deployment_stated={},
            scenario_stated=scenario,
            points=points,
            environment={"extra": extra},
        )
    ]


def _summary(
    row: dict[str, Any], where: str
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """One summary's point, scenario and what is kept as written."""
    _version(row, where)

    latency: dict[str, dict[str, float]] = {}
    unslotted: dict[str, dict[str, Any]] = {}
    aside: dict[str, dict[str, Any]] = {}
    metadata: dict[str, Any] = {}
    sampling: dict[str, Any] = {}
    for key, value in row.items():
        match = STAT_KEY.match(key)
        if match:
            metric, stat = match["metric"], match["stat"]
            if metric not in LATENCY:
                # Kept as written: number_*_tokens min/max are strings ("550") in real files.
                aside.setdefault(metric, {})[stat] = value
                continue
            seconds = _stat(row, key, where)
            if seconds is None:
                continue
            if stat in STAT_SLOTS:
                latency.setdefault(LATENCY[metric], {})[STAT_SLOTS[stat]] = to_ms(seconds, "s")
            else:
                unslotted.setdefault(metric, {"unit": "s"})[stat] = seconds
        elif key.startswith("additional_sampling_params"):
            sampling[key] = value
        elif key in SETUP or key in COUNTS:
            continue
        elif key.startswith("results_"):
            raise ImportFailure(f"{where}: unknown field {key}")
        elif isinstance(value, str):
            metadata[key] = value  # --metadata key=value pairs are strings
        else:
            raise ImportFailure(f"{where}: unknown field {key}")

    started = integer(row, "results_num_requests_started", where)
    completed = integer(row, "results_num_completed_requests", where)
    errors = integer(row, "results_number_errors", where)
    if started is None or completed is None or errors is None:
        raise ImportFailure(
            f"{where}: missing results_num_requests_started, results_num_completed_requests "
            "or results_number_errors"
        )
    if completed + errors != started:
        raise ImportFailure(
            f"{where}: {completed} completed and {errors} errored requests do not make the "
            f"{started} started"
        )
    per_min = number(row, "results_num_completed_requests_per_min", where)
    point: dict[str, Any] = {
        "concurrency": integer(row, "num_concurrent_requests", where),
        "requests": {"total": started, "succeeded": completed, "failed": errors},
        "throughput": drop_none(
            {
                "output_tok_s": number(row, "results_mean_output_throughput_token_per_s", where),
                "requests_per_s": None if per_min is None else per_min / 60.0,
            }
        ),
        "latency_ms": latency if completed else {},
        "errors": _error_codes(row.get("results_error_code_frequency"), where),
    }

    scenario: dict[str, Any] = {"arrival": "closed", "dataset": DATASET}
    lengths = {
        "input_tokens": integer(row, "mean_input_tokens", where),
        "output_tokens": integer(row, "mean_output_tokens", where),
    }
    scenario.update({k: v for k, v in lengths.items() if v})
    spreads = (
        number(row, "stddev_input_tokens", where),
        number(row, "stddev_output_tokens", where),
    )
    if spreads == (0, 0):
        scenario["length_spread"] = 0.0  # stated; a normal spread has no place in ours

    extra: dict[str, Any] = {
        "name": row.get("name"),
        "timestamp_unix": row.get("timestamp"),
        "requested_lengths": {
            "stddev_input_tokens": spreads[0],
            "stddev_output_tokens": spreads[1],
        },
        "per_request_stats_without_slot": aside,
        "token_source": "llmperf's Llama tokenizer (hf-internal-testing/llama-tokenizer)",
    }
    if unslotted:
        extra["latency_stats_without_slot_s"] = unslotted
    if sampling:
        extra["additional_sampling_params"] = sampling
    if metadata:
        extra["metadata"] = metadata
    return drop_none(point), scenario, drop_none(extra)


def parse_responses(job: ImportInput) -> list[ResultDocument]:
    where = job.main.name
    rows = load_json(job.main)
    if not isinstance(rows, list) or not rows:
        raise ImportFailure(f"{where}: expected a JSON array of llmperf responses")
    ok: list[dict[str, Any]] = []
    errors: dict[str, int] = {}
    texts = 0
    for index, item in enumerate(rows):
        at = f"{where} [{index}]"
        response = expect_object(item, at)
        unknown = sorted(k for k in response if k not in RESPONSE_KEYS and k != RESPONSE_TEXT)
        if unknown:
            raise ImportFailure(f"{at}: unknown field(s) {', '.join(unknown)}")
        texts += RESPONSE_TEXT in response
        code = response.get("error_code")
        if code is None:
            for key in ("ttft_s", "end_to_end_latency_s"):
                if number(response, key, at) is None:
                    raise ImportFailure(f"{at}: a successful response without {key}")
            for key in ("number_input_tokens", "number_output_tokens"):
                if integer(response, key, at) is None:
                    raise ImportFailure(f"{at}: a successful response without {key}")
            ok.append(response)
        else:
            name = _code_name(code)
            errors[name] = errors.get(name, 0) + 1
    failed = len(rows) - len(ok)

    latency = {}
    for key, slot in LATENCY.items():
        dist = distribution(to_ms(r[key], "s") for r in ok)
        if dist is not None:
            latency[slot] = dist.model_copy(update={"method": COMPUTED}).model_dump(
                exclude_none=True
            )
    tokens: dict[str, Any] = {"source": "tokenizer"}
    if ok:
        tokens["input"] = sum(int(r["number_input_tokens"]) for r in ok)
        tokens["output"] = sum(int(r["number_output_tokens"]) for r in ok)
    point: dict[str, Any] = {
        "requests": {"total": len(rows), "succeeded": len(ok), "failed": failed},
        "tokens": tokens,
        "throughput": {},
        "latency_ms": latency,
        "errors": errors,
    }

    extra: dict[str, Any] = {
        "records_omitted": "llmperf's individual responses have no send times",
        "token_source": "llmperf's Llama tokenizer (hf-internal-testing/llama-tokenizer)",
    }
    if texts:
        extra["responses_with_text"] = texts  # GEN_TEXT, not stored
    scenario: dict[str, Any] = {"arrival": "closed", "dataset": DATASET}
    sent = [(r["number_input_tokens"], r["number_output_tokens"]) for r in ok]
    derived = derived_lengths(job, sent, DERIVED)
    if derived:
        lengths, extra["scenario_lengths"] = derived
        scenario.update(lengths)
    return [
        build_document(
            job,
            tool=f"{TOOL}, individual responses",
            model_stated=None,
            deployment_stated={},
            scenario_stated=scenario,
            points=[point],
            environment={"extra": extra},
        )
    ]


def _code_name(code: Any) -> str:
    # Codes are HTTP statuses (429) or llmperf's own negatives; pandas may write 429.0.
    if isinstance(code, float) and code.is_integer():
        code = int(code)
    return str(code)[:100]


def _error_codes(frequency: Any, where: str) -> dict[str, int] | None:
    if frequency is None:
        return None
    text = str(frequency).strip()
    pairs = FREQUENCY.findall(text)
    if text != "{}" and not pairs:
        raise ImportFailure(
            f"{where}: results_error_code_frequency {text!r} is not a code: count mapping"
        )
    return {_code_name(float(code)): int(count) for code, count in pairs}


register(
    Format(
        name="llmperf",
        tool=TOOL,
        summary="llmperf *_summary.json (one closed-loop point; seconds become ms)",
        sniff=_sniff_summary,
        parse=parse_summary,
    )
)
register(
    Format(
        name="llmperf-sweep",
        tool=f"{TOOL}, summaries keyed by concurrency",
        summary="llmperf summaries collected in one object keyed by concurrency (one point each)",
        sniff=_sniff_sweep,
        parse=parse_sweep,
    )
)
register(
    Format(
        name="llmperf-condensed",
        tool=f"{TOOL}, condensed summaries keyed by concurrency",
        summary="llmperf-bench's condensed summaries by concurrency (mean TTFT, output tok/s)",
        sniff=_sniff_condensed,
        parse=parse_condensed,
    )
)
register(
    Format(
        name="llmperf-responses",
        tool=f"{TOOL}, individual responses",
        summary="llmperf *_individual_responses.json (counts, tokens, computed latencies)",
        sniff=_sniff_responses,
        parse=parse_responses,
    )
)
