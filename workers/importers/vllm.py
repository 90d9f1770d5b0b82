"""vLLM `vllm bench serve --save-result` JSON.

Also reads `vllm bench sweep` run files: the same result with the run's serve and bench
parameters merged in as scalar keys (max_num_seqs, max_num_batched_tokens ...) and a
`run_number`; they are kept as environment.extra.sweep_parameters, not refused. A sweep's
`summary.json` is a JSON array of those run results (one per `run=N.json` of a parameter
combination); each becomes one document, as each line of an --append-result file does.

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

Also reads a 2024 result of `benchmarks/benchmark_serving.py` (format
`vllm-benchmark-serving`), as LambdaLabsML/vllm-benchmark saved it in September 2024 with
the vllm/vllm-openai v0.5.4 image: setup keys with best_of and use_beam_search, no
`failed` (completed counts the successes of num_prompts), `input_throughput` (prompt
tokens per second) beside request and output throughput, no `total_token_throughput`,
and request latency named `<mean|median|std|p99>_latency_ms` (milliseconds, like every
`*_ms` key: the end-to-end time of each request, our e2el) beside ttft, tpot and itl.
It always carries the per-request arrays (input_lens, output_lens, ttfts and itls in
seconds, generated_texts, errors) but no start_times, so no records. It states no target
lengths (the prompts are ShareGPT conversations): the scenario's lengths are the means of
the successful requests' input_lens and output_lens, rounded, and labelled as derived in
environment.extra.scenario_lengths, unless the facts give them. The repository does not
hold the benchmark_serving.py copy it ran, so how output tokens were counted is not
stated (a success may have 0 of them); the token source stays "unknown".

The file names no serving engine (`backend: openai` is the client protocol) and no
hardware; those come from the facts. It states its lengths by what it measured, so they are
derived (workers/importers/derived.py), never asked: the rounded means of the per-request
arrays when it keeps them, else total_input_tokens / total_output_tokens over completed
where they divide exactly (a remainder means lengths varied: that slot is asked). A file
with spec_decode_* fields shows speculative decoding ran without naming the method, which
the one refusal of missing facts asks for with the rest.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from workers.figures import run_status
from workers.importers import benchjson
from workers.importers.benchjson import counts_from_lists, latency_stats, records, request_lists
from workers.importers.common import (
    ImportInput,
    build_document,
    drop_none,
    expect_object,
    integer,
    load_json,
    load_jsonl,
    number,
    rate_bound,
    require_keys,
)
from workers.importers.derived import Derived, derived_lengths, lengths_from_totals
from workers.importers.errors import ImportFailure
from workers.importers.registry import Format, Preview, register
from workers.results import ResultDocument

TOOL = "vllm bench serve 0.11-0.13"

SPEC_KEYS = (
    "spec_decode_acceptance_rate",
    "spec_decode_acceptance_length",
    "spec_decode_num_drafts",
    "spec_decode_draft_tokens",
    "spec_decode_accepted_tokens",
    "spec_decode_per_position_acceptance_rates",
)
# Field names only a multi-turn benchmark writes (turns, conversations, sessions).
_MULTI_TURN = re.compile(r"turn|conversation|session", re.IGNORECASE)

KNOWN = benchjson.SERVING_KEYS | {
    "endpoint_type",
    "backend",
    "label",
    "ramp_up_strategy",
    "ramp_up_start_rps",
    "ramp_up_end_rps",
    "rps_change_events",
    "failed",
    "total_token_throughput",
    "max_output_tokens_per_s",
    "max_concurrent_requests",
    "rtfx",
    *SPEC_KEYS,
    *benchjson.REQUEST_LISTS,
    "generated_texts",
    "start_times",
}
REQUIRED = ("model_id", "duration", "completed", "num_prompts")
# Written by vLLM's older benchmarks/benchmark_serving.py (0.6-0.10; `request_goodput:` with
# its stray colon, best_of, use_beam_search), which InferenceX vendors, and not by `vllm
# bench serve`.
CLIENT_KEYS = {"best_of", "request_goodput:", "use_beam_search"}
# Later vendored copies add the window's wall-clock bounds (unix seconds, so UTC).
CLIENT_TIMES = ("benchmark_start_time_unix", "benchmark_end_time_unix")
# Upstream vLLM's client wrote this layout (the stray colon included) before InferenceX
# vendored it (24b02df5), so the label names vLLM: a plain vLLM file is not InferenceX's.
CLIENT_TOOL = "vLLM benchmarks/benchmark_serving.py 0.6-0.10"
# The 2024 benchmark_serving.py result: input_throughput and <stat>_latency_ms.
LEGACY_TOOL = "vLLM benchmarks/benchmark_serving.py, 2024 (input_throughput, *_latency_ms)"
LEGACY_KEYS = {"input_throughput"}
LEGACY_LATENCY = re.compile(r"^(mean|median|std|p\d+(?:\.\d+)?)_latency_ms$")
# InferenceX multi-node result names: concurrency, rate, GPUs and the prefill/decode pools.
CLIENT_NAME = re.compile(
    r"concurrency_(?P<conc>\d+)_req_rate_(?P<rate>inf|[\d.]+)_gpus_(?P<gpus>\d+)"
    r"_ctx_(?P<ctx>\d+)_gen_(?P<gen>\d+)"
)
# A Hugging Face cache path names the repository: .../models--openai--gpt-oss-120b/snapshots/..
HF_CACHE = re.compile(r"models--(?P<org>[^/]+?)--(?P<name>[^/]+)")
METRICS = {"ttft": "ttft", "tpot": "tpot", "itl": "itl", "e2el": "e2el"}
LEGACY_METRICS = {"ttft": "ttft", "tpot": "tpot", "itl": "itl", "latency": "e2el"}
DERIVED = "rounded means of the successful requests' input_lens and output_lens"
DERIVED_LENGTHS = "rounded means of input_lens and output_lens (every request completed)"
DERIVED_TOTALS = "total_input_tokens and total_output_tokens over completed, which divide exactly"
EXTRA_KEYS = (
    "best_of",
    "use_beam_search",
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
)


def _first_row(seen: Preview) -> Any:
    # benchmark_serving.py --append-result adds each run as one more line: JSON lines.
    row = seen.value if seen.value is not None else seen.first_line
    # `vllm bench sweep` writes its summary.json as an array of run results.
    return row[0] if isinstance(row, list) and row else row


def _serve_shaped(seen: Preview) -> bool:
    row = _first_row(seen)
    return (
        isinstance(row, dict)
        and "model_id" in row
        and ("median_ttft_ms" in row or "median_e2el_ms" in row)
    )


def _is_client(row: dict[str, Any]) -> bool:
    return any(key in row for key in CLIENT_KEYS)


def _sniff(seen: Preview) -> bool:
    return _serve_shaped(seen) and not _is_client(_first_row(seen))


def _is_legacy(row: dict[str, Any]) -> bool:
    return _is_client(row) and (
        any(key in row for key in LEGACY_KEYS) or any(LEGACY_LATENCY.match(k) for k in row)
    )


def _sniff_client(seen: Preview) -> bool:
    row = _first_row(seen)
    return _serve_shaped(seen) and _is_client(row) and not _is_legacy(row)


def _sniff_legacy(seen: Preview) -> bool:
    return _serve_shaped(seen) and _is_legacy(_first_row(seen))


def parse(job: ImportInput) -> list[ResultDocument]:
    return _parse(job, client=False)


def parse_client(job: ImportInput) -> list[ResultDocument]:
    return _parse(job, client=True)


def parse_legacy(job: ImportInput) -> list[ResultDocument]:
    return _parse(job, client=True, legacy=True)


def _parse(job: ImportInput, *, client: bool, legacy: bool = False) -> list[ResultDocument]:
    where = job.main.name
    try:
        loaded = load_json(job.main)
    except ImportFailure:
        # --append-result files hold one result per line; anything else keeps its JSON error.
        lines = _appended(job)
        if lines is None:
            raise
        rows = [(f"{where} line {n}", row) for n, row in enumerate(lines, start=1)]
    else:
        rows = (
            [(f"{where} [{n}]", row) for n, row in enumerate(loaded)]
            if isinstance(loaded, list)
            else [(where, loaded)]
        )
    if not rows:
        raise ImportFailure(f"{where}: the sweep summary holds no runs")
    return [
        _parse_row(
            job,
            expect_object(row, at),
            at,
            client=client,
            legacy=legacy,
            index=n if len(rows) > 1 else None,
        )
        for n, (at, row) in enumerate(rows)
    ]


def _appended(job: ImportInput) -> list[Any] | None:
    try:
        lines = load_jsonl(job.main)
    except ImportFailure:
        return None
    return lines if len(lines) > 1 and all(isinstance(row, dict) for row in lines) else None


def _parse_row(
    job: ImportInput,
    row: dict[str, Any],
    where: str,
    *,
    client: bool,
    index: int | None,
    legacy: bool = False,
) -> ResultDocument:
    if client:
        # The vendored client writes 'request_goodput:' (a stray colon) for request_goodput.
        row = {("request_goodput" if k == "request_goodput:" else k): v for k, v in row.items()}
    times = {k: row.pop(k) for k in CLIENT_TIMES if client and k in row}
    lengths_only: dict[str, list[Any]] | None = None
    if client and "input_lens" in row and "ttfts" not in row and "errors" not in row:
        # Some runs keep only the per-request lengths: no timings, so no records.
        lengths_only = {k: row.pop(k) for k in ("input_lens", "output_lens") if k in row}
    latency, unslotted, consumed = latency_stats(row, LEGACY_METRICS if legacy else METRICS, where)
    rest = {k: v for k, v in row.items() if k not in consumed}
    known = KNOWN | CLIENT_KEYS if client else KNOWN
    if legacy:
        known = known | LEGACY_KEYS
    metadata = {k: v for k, v in rest.items() if k not in known}
    multi_turn = sorted(
        k for k, v in metadata.items() if _MULTI_TURN.search(k) and not isinstance(v, str)
    )
    if multi_turn:
        # A multi-turn benchmark's summary shares bench serve's figures and adds its own
        # per-turn and per-conversation ones; read as one bench serve run, its figures would
        # be mislabelled (a turn is not a request of a fixed shape).
        raise ImportFailure(
            f"{where}: this is a multi-turn benchmark's output (fields "
            f"{', '.join(multi_turn)}), not `vllm bench serve`: the format is recognised but "
            "not read here, so no --format value imports it"
        )
    sweep = {}
    if not client and isinstance(row.get("run_number"), int):
        # `vllm bench sweep` merges the run's serve/bench parameters (max_num_seqs ...) and
        # its run_number into the result: scalars kept as the sweep's parameters.
        sweep = {
            k: metadata.pop(k)
            for k in list(metadata)
            if isinstance(metadata[k], int | float | bool | None)
        }
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
    requested = None if rate == "inf" else number(row, "request_rate", where)
    open_loop = rate_bound(
        requested,
        integer(row, "max_concurrency", where),
        number(row, "request_throughput", where),
    )

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
    elif client and completed is not None:
        # The vendored client sends every prompt and counts the successes in `completed`.
        prompts = integer(row, "num_prompts", where) or 0
        if completed > prompts:
            raise ImportFailure(f"{where}: completed ({completed}) exceeds num_prompts")
        counts = {"total": prompts, "succeeded": completed, "failed": prompts - completed}
    else:
        counts = None

    if completed == 0:
        # With nothing completed the tool writes 0.0 for every statistic: placeholders, not
        # measurements of 0 ms, so a failed run carries no latency figures.
        latency, unslotted = {}, {}
    point: dict[str, Any] = {
        "concurrency": integer(row, "max_concurrency", where),
        "request_rate": rate if open_loop else None,
        "window_s": number(row, "duration", where),
        "requests": counts,
        "tokens": drop_none(benchjson.token_totals(row, where)),
        "throughput": drop_none(
            {
                "requests_per_s": number(row, "request_throughput", where),
                "input_tok_s": number(row, "input_throughput", where) if legacy else None,
                "output_tok_s": number(row, "output_throughput", where),
                "total_tok_s": number(row, "total_token_throughput", where),
            }
        ),
        "latency_ms": latency,
        "goodput_rps": number(row, "request_goodput", where),
        "records": records(lists, where) if lists else None,
        "speculative_acceptance": _acceptance(row, where),
    }
    extra: dict[str, Any] = {k: row[k] for k in EXTRA_KEYS if row.get(k) is not None}
    if requested is not None:
        extra["requested_rate"] = requested  # beside the achieved request_throughput
    # vLLM counts prompts with the local tokenizer and outputs from usage; the 2024 client
    # that wrote a legacy file is not published, so its output count is not stated.
    extra["token_sources"] = {"input": "tokenizer", "output": "not stated" if legacy else "usage"}
    if metadata:
        extra["metadata"] = metadata
    if sweep:
        extra["sweep_parameters"] = sweep
    if unslotted:
        extra["latency_stats_without_slot_ms"] = unslotted
    if lists and point["records"] is None:
        extra["records_omitted"] = "per-request arrays have no start_times (send times)"
    if lengths_only:
        extra["records_omitted"] = "the file keeps per-request lengths only, no timings"
        extra["per_request_lengths"] = {k: len(v) for k, v in lengths_only.items()}

    num_prompts = integer(row, "num_prompts", where)
    scenario: dict[str, Any] = {"arrival": "open" if open_loop else "closed"}
    if num_prompts:
        scenario["request_count"] = num_prompts
    derived = _derived(job, row, lists, lengths_only, completed, where)
    if derived:
        lengths, extra["scenario_lengths"] = derived
        scenario.update(lengths)
    # The counts decide (workers.figures.run_status); without them, none completed is failed.
    status = run_status([counts], "failed" if completed == 0 else "succeeded")
    deployment: dict[str, Any] = {}
    model = row.get("model_id")
    if point["speculative_acceptance"] is not None:
        deployment["speculative"] = _speculative(point["speculative_acceptance"])
    if client and not legacy:
        deployment.update(_client_name_facts(job.main.name, point["concurrency"], where))
        cached = HF_CACHE.search(str(model or ""))
        if cached:
            extra["model_id"] = model
            model = f"{cached['org']}/{cached['name']}"
    return build_document(
        job,
        tool=LEGACY_TOOL if legacy else CLIENT_TOOL if client else TOOL,
        model_stated=model,
        deployment_stated=deployment,
        scenario_stated=scenario,
        points=[drop_none(point)],
        environment={"extra": extra, **_window(times, where)},
        status=status,
        index=index,
    )


def _derived(
    job: ImportInput,
    row: dict[str, Any],
    lists: dict[str, list[Any]] | None,
    lengths_only: dict[str, list[Any]] | None,
    completed: int | None,
    where: str,
) -> Derived | None:
    """The lengths the file states by what it measured: the per-request arrays' means when it
    keeps them (--save-detailed), else its token totals where they divide exactly."""
    if lists:
        sent = [
            (n_in, n_out)
            for n_in, n_out, error in zip(
                lists["input_lens"], lists["output_lens"], lists["errors"], strict=True
            )
            if not error
        ]
        return derived_lengths(job, sent, DERIVED)
    inputs = (lengths_only or {}).get("input_lens")
    outputs = (lengths_only or {}).get("output_lens")
    # Without an errors array the lengths are the successes' only when every request
    # completed (a failed one would count with output 0).
    if (
        isinstance(inputs, list)
        and isinstance(outputs, list)
        and completed == len(inputs) == len(outputs)
        and all(_count(v) for v in inputs + outputs)
    ):
        return derived_lengths(job, list(zip(inputs, outputs, strict=True)), DERIVED_LENGTHS)
    totals = {
        "input_tokens": integer(row, "total_input_tokens", where),
        "output_tokens": integer(row, "total_output_tokens", where),
    }
    return lengths_from_totals(job, totals, completed, DERIVED_TOTALS)


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _window(times: dict[str, Any], where: str) -> dict[str, str]:
    out = {}
    for key, slot in zip(CLIENT_TIMES, ("started_at", "finished_at"), strict=True):
        value = number(times, key, where)
        if value is not None:
            out[slot] = datetime.fromtimestamp(value, UTC).isoformat()
    return out


def _acceptance(row: dict[str, Any], where: str) -> dict[str, Any] | None:
    if not any(row.get(k) is not None for k in SPEC_KEYS):
        return None
    per_position = row.get("spec_decode_per_position_acceptance_rates")
    if per_position is not None and (
        not isinstance(per_position, list)
        or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in per_position)
    ):
        raise ImportFailure(
            f"{where}: field spec_decode_per_position_acceptance_rates should be a list of "
            f"numbers, got {per_position!r}"
        )
    rate = number(row, "spec_decode_acceptance_rate", where)
    acceptance = {
        # vLLM reports the acceptance rate in percent (accepted / drafted * 100).
        "rate": rate / 100 if rate is not None else None,
        "length": number(row, "spec_decode_acceptance_length", where),
        "drafts": integer(row, "spec_decode_num_drafts", where),
        "draft_tokens": integer(row, "spec_decode_draft_tokens", where),
        "accepted_tokens": integer(row, "spec_decode_accepted_tokens", where),
        "per_position": per_position,
    }
    return drop_none(acceptance)


def _speculative(acceptance: dict[str, Any]) -> dict[str, Any]:
    """What the file states of speculative decoding: that it ran, and with per-position
    rates, how many tokens each step drafted. It never names the method, so the refusal of
    missing facts asks for it with the rest (build_document), never on its own first."""
    if acceptance.get("per_position"):
        # One acceptance rate per draft position: the number of draft tokens per step.
        return {"draft_tokens": len(acceptance["per_position"])}
    return {}


def _client_name_facts(filename: str, concurrency: int | None, where: str) -> dict[str, Any]:
    named = CLIENT_NAME.search(filename)
    if not named:
        return {}
    if concurrency is not None and int(named["conc"]) != concurrency:
        raise ImportFailure(
            f"{where}: max_concurrency is {concurrency} but the file name says "
            f"concurrency_{named['conc']}"
        )
    gpus, ctx, gen = int(named["gpus"]), int(named["ctx"]), int(named["gen"])
    if ctx + gen != gpus:
        raise ImportFailure(f"{where}: the file name says {gpus} GPUs but ctx {ctx} + gen {gen}")
    return {"gpus": gpus, "disaggregation": {"prefill_gpus": ctx, "decode_gpus": gen}}


register(
    Format(
        name="inferencex-benchmark-serving",
        tool=CLIENT_TOOL,
        summary="vLLM benchmark_serving.py 0.6-0.10 JSON, InferenceX's vendored client too "
        "(best_of, 'request_goodput:')",
        sniff=_sniff_client,
        parse=parse_client,
    )
)
register(
    Format(
        name="vllm-benchmark-serving",
        tool=LEGACY_TOOL,
        summary="vLLM benchmark_serving.py 2024 JSON (input_throughput, *_latency_ms)",
        sniff=_sniff_legacy,
        parse=parse_legacy,
    )
)
register(
    Format(
        name="vllm-bench-serve",
        tool=TOOL,
        summary="vLLM `bench serve` result JSON (*_ms latencies, optional detailed arrays)",
        sniff=_sniff,
        parse=parse,
    )
)
