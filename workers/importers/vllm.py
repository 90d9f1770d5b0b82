"""vLLM `vllm bench serve --save-result` JSON.

Reads the result format of `vllm/benchmarks/serve.py` in vLLM 0.11 to 0.13 (read from the
vllm-project/vllm source): setup keys (date, endpoint_type, backend, label, model_id,
tokenizer_id, num_prompts, request_rate — a number or the string "inf" —, burstiness,
max_concurrency, optional ramp_up_*), any `--metadata KEY=VALUE` pairs as extra string
keys, counts (completed, failed), throughputs per second over `duration` seconds, and
latency statistics named `<mean|median|std|pNN>_<ttft|tpot|itl|e2el>_ms` (milliseconds;
the percentiles are those of `--metric-percentiles`). With `--save-detailed` it also holds
per-request arrays input_lens, output_lens, ttfts and itls (SECONDS: perf_counter
differences), generated_texts and errors; they give the request counts. They give
per-request records only where the file also has start_times, since a record needs its
send time.

The file names no serving engine (`backend: openai` is the client protocol) and no
hardware; those come from the facts.
"""

from __future__ import annotations

from typing import Any

from workers.importers.benchjson import counts_from_lists, latency_stats, records, request_lists
from workers.importers.common import (
    ImportInput,
    build_document,
    expect_object,
    integer,
    load_json,
    number,
    require_keys,
)
from workers.importers.errors import ImportFailure
from workers.importers.registry import Format, Preview, register
from workers.results import ResultDocument

TOOL = "vllm bench serve 0.11-0.13"

KNOWN = {
    "date",
    "endpoint_type",
    "backend",
    "label",
    "model_id",
    "tokenizer_id",
    "num_prompts",
    "request_rate",
    "burstiness",
    "max_concurrency",
    "ramp_up_strategy",
    "ramp_up_start_rps",
    "ramp_up_end_rps",
    "rps_change_events",
    "duration",
    "completed",
    "failed",
    "total_input_tokens",
    "total_output_tokens",
    "request_throughput",
    "request_goodput",
    "output_throughput",
    "total_token_throughput",
    "max_output_tokens_per_s",
    "max_concurrent_requests",
    "rtfx",
    "spec_decode_acceptance_rate",
    "spec_decode_acceptance_length",
    "spec_decode_num_drafts",
    "spec_decode_draft_tokens",
    "spec_decode_accepted_tokens",
    "spec_decode_per_position_acceptance_rates",
    "input_lens",
    "output_lens",
    "ttfts",
    "itls",
    "generated_texts",
    "errors",
    "start_times",
}
REQUIRED = ("model_id", "duration", "completed", "num_prompts")
METRICS = {"ttft": "ttft", "tpot": "tpot", "itl": "itl", "e2el": "e2el"}
EXTRA_KEYS = (
    "date",
    "endpoint_type",
    "backend",
    "label",
    "tokenizer_id",
    "burstiness",
    "ramp_up_strategy",
    "ramp_up_start_rps",
    "ramp_up_end_rps",
    "max_output_tokens_per_s",
    "max_concurrent_requests",
    "spec_decode_acceptance_rate",
    "spec_decode_acceptance_length",
    "spec_decode_num_drafts",
    "spec_decode_draft_tokens",
    "spec_decode_accepted_tokens",
)


def _sniff(seen: Preview) -> bool:
    row = seen.value
    return (
        isinstance(row, dict)
        and "model_id" in row
        and ("median_ttft_ms" in row or "median_e2el_ms" in row)
    )


def parse(job: ImportInput) -> list[ResultDocument]:
    where = job.main.name
    row = expect_object(load_json(job.main), where)
    latency, unslotted, consumed = latency_stats(row, METRICS, where)
    rest = {k: v for k, v in row.items() if k not in consumed}
    metadata = {k: v for k, v in rest.items() if k not in KNOWN}
    not_strings = sorted(k for k, v in metadata.items() if not isinstance(v, str))
    if not_strings:
        # --metadata only ever writes strings; anything else is a field we do not know.
        raise ImportFailure(f"{where}: unknown field(s) {', '.join(not_strings)}")
    require_keys(rest, REQUIRED, where)  # other keys are KNOWN or --metadata strings

    rate = row.get("request_rate")
    if rate != "inf" and number(row, "request_rate", where) is None:
        raise ImportFailure(f"{where}: request_rate should be a number or 'inf', got {rate!r}")
    if "ramp_up_strategy" in row:
        raise ImportFailure(f"{where}: ramp-up runs (ramp_up_strategy) are not supported")
    open_loop = rate != "inf"

    lists = request_lists(row, where)
    completed = integer(row, "completed", where)
    failed = integer(row, "failed", where)
    if lists:
        counts = counts_from_lists(lists)
        if counts["succeeded"] != completed:
            raise ImportFailure(
                f"{where}: completed is {completed} but the errors array has "
                f"{counts['succeeded']} successes"
            )
    elif failed is not None and completed is not None:
        counts = {"total": completed + failed, "succeeded": completed, "failed": failed}
    else:
        counts = None

    point: dict[str, Any] = {
        "concurrency": integer(row, "max_concurrency", where),
        "request_rate": rate if open_loop else None,
        "window_s": number(row, "duration", where),
        "requests": counts,
        "tokens": _drop_none(
            {
                "input": integer(row, "total_input_tokens", where),
                "output": integer(row, "total_output_tokens", where),
                # vLLM counts prompts with the local tokenizer and outputs from usage.
                "source": "unknown",
            }
        ),
        "throughput": _drop_none(
            {
                "requests_per_s": number(row, "request_throughput", where),
                "output_tok_s": number(row, "output_throughput", where),
                "total_tok_s": number(row, "total_token_throughput", where),
            }
        ),
        "latency_ms": latency,
        "goodput_rps": number(row, "request_goodput", where),
        "records": records(lists, where) if lists else None,
    }
    extra: dict[str, Any] = {k: row[k] for k in EXTRA_KEYS if row.get(k) is not None}
    extra["token_sources"] = {"input": "tokenizer", "output": "usage"}
    if metadata:
        extra["metadata"] = metadata
    if unslotted:
        extra["latency_stats_without_slot_ms"] = unslotted
    if lists and point["records"] is None:
        extra["records_omitted"] = "per-request arrays have no start_times (send times)"

    prompts = integer(row, "num_prompts", where)
    scenario: dict[str, Any] = {"arrival": "open" if open_loop else "closed"}
    if prompts:
        scenario["request_count"] = prompts
    status = "succeeded"
    if counts and counts["failed"]:
        status = "failed" if counts["succeeded"] == 0 else "partial"
    return [
        build_document(
            job,
            tool=TOOL,
            model_stated=row.get("model_id"),
            deployment_stated={},
            scenario_stated=scenario,
            points=[_drop_none(point)],
            environment={"extra": extra},
            status=status,
        )
    ]


def _drop_none(tree: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in tree.items() if v is not None}


register(
    Format(
        name="vllm-bench-serve",
        tool=TOOL,
        summary="vLLM `bench serve` result JSON (*_ms latencies, optional detailed arrays)",
        sniff=_sniff,
        parse=parse,
    )
)
