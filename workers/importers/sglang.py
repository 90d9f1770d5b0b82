"""sglang `python -m sglang.bench_serving` results (JSON Lines, one run per line).

Reads the line format of sglang 0.5.x (checked against a real 0.5.23 file and
`python/sglang/bench_serving.py` of that series): run arguments (backend, dataset_name,
request_rate, max_concurrency, random_input_len/output_len/range_ratio ...), counts,
throughputs in tokens (requests) per second over `duration` seconds, and latency
statistics whose keys end in `_ms` (milliseconds). With `--output-details` a line also
carries per-request arrays (input_lens, output_lens, ttfts, itls in seconds, errors).

sglang writes `"request_rate": Infinity` for closed-loop runs, which is not strict JSON;
it is accepted here (and only for that field's sake) because the tool writes it.

Each line becomes one point of one document (a `--request-rate` sweep appends lines to one
file). `backend` (e.g. sglang-oai) names the client protocol, not the serving engine, so
without `server_info` the engine must be given as a fact, and the line names no model.

`server_info` (sglang's /get_server_info, which bench_serving saves for its sglang backends)
is the server's arguments: the model (`served_model_name`, else `model_path`), the sglang
`version`, tp/pp/ep/dp sizes, DP attention, nnodes and the speculative algorithm, read as
the file's own facts. A prefill/decode router (sglang's mini_lb, sgl-router) answers
`{"prefill": [...], "decode": [...], "internal_states": [...]}` with its workers' answers:
the run is stored as a disaggregated deployment with each pool's layout, and each pool's
GPUs are asked: a router's list is not always every worker (real 1P2D..1P8D runs through
sgl-router list one decode server), so its length is kept aside, not read as the pool size.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from workers.importers import benchjson
from workers.importers.benchjson import counts_from_lists, latency_stats, records, request_lists
from workers.importers.common import (
    ImportInput,
    build_document,
    check_keys,
    dataset_name,
    drop_none,
    expect_object,
    integer,
    load_jsonl,
    number,
    rate_bound,
)
from workers.importers.derived import Derived, lengths_from_means
from workers.importers.errors import ImportFailure
from workers.importers.registry import Format, Preview, register
from workers.results import ResultDocument

TOOL = "sglang bench_serving 0.5.x"
DERIVED = "rounded total_input_tokens and total_output_tokens over completed, of the first line"

KNOWN = {
    "tag",
    "backend",
    "dataset_name",
    "request_rate",
    "max_concurrency",
    "sharegpt_output_len",
    "random_input_len",
    "random_output_len",
    "random_range_ratio",
    "server_info",
    "duration",
    "completed",
    "total_input_tokens",
    "total_input_text_tokens",
    "total_input_vision_tokens",
    "total_output_tokens",
    "total_output_tokens_retokenized",
    "request_throughput",
    "input_throughput",
    "output_throughput",
    "total_throughput",
    "concurrency",
    "accept_length",
    "max_output_tokens_per_s",
    "max_concurrent_requests",
    *benchjson.REQUEST_LISTS,
    "generated_texts",
}
METRICS = {"ttft": "ttft", "tpot": "tpot", "itl": "itl", "e2e_latency": "e2el"}
RANDOM_DATASETS = ("random", "random-ids")


def _sniff(seen: Preview) -> bool:
    # Older lines have no dataset_name; the e2e_latency keys are sglang's own spelling.
    row = seen.first_line if seen.first_line is not None else seen.value
    return (
        isinstance(row, dict)
        and ("mean_e2e_latency_ms" in row or "median_e2e_latency_ms" in row)
        and "completed" in row
        and "model_id" not in row
    )


def parse(job: ImportInput) -> list[ResultDocument]:
    rows = load_jsonl(job.main, allow_nonfinite=True)
    # Lines of one scenario and one server make one document; a file mixing datasets,
    # lengths or servers (one bench_serving output file appended to by several runs) makes
    # one document each.
    groups: dict[str, tuple[dict[str, Any], list[dict], list[dict]]] = {}
    servers: dict[str, Server] = {}
    derived: dict[str, dict[str, Any]] = {}
    for number_, row in enumerate(rows, start=1):
        where = f"{job.main.name} line {number_}"
        row = expect_object(row, where)
        point, scenario, extra = _point(row, where)
        server = server_stated(row.get("server_info"), where)
        key = json.dumps([scenario, server.model, server.deployment], sort_keys=True)
        if key not in groups and "input_tokens" not in scenario:
            # The group's lengths: what its first run sent (later runs differ a little).
            sent = _sent_means(job, row, where)
            if sent:
                scenario.update(sent[0])
                derived[key] = sent[1]
        groups.setdefault(key, (scenario, [], []))
        servers.setdefault(key, server)
        groups[key][1].append(point)
        groups[key][2].append({"line": number_, **extra, **server.notes})
    many = len(groups) > 1
    return [
        build_document(
            job,
            tool=TOOL,
            model_stated=servers[key].model,
            deployment_stated=servers[key].deployment,
            scenario_stated=scenario,
            points=points,
            environment={
                "extra": drop_none(
                    {
                        "lines": extras,
                        "token_sources": {"input": "tokenizer", "output": "usage"},
                        "scenario_lengths": derived.get(key),
                    }
                )
            },
            index=index if many else None,
            where=f"{job.main.name} lines {extras[0]['line']}.." if many else None,
        )
        for index, (key, (scenario, points, extras)) in enumerate(groups.items())
    ]


@dataclass(frozen=True)
class Server:
    """What a line's server_info states: the model, the deployment, notes on how it was read."""

    model: str | None = None
    deployment: dict[str, Any] = field(default_factory=dict)
    notes: dict[str, Any] = field(default_factory=dict)


def server_stated(info: Any, where: str) -> Server:
    """The model and deployment sglang's /get_server_info answer states (see the module
    docstring); nothing when the line has none or it is not a server's arguments."""
    if not isinstance(info, dict):
        return Server()
    if "prefill" in info or "decode" in info:
        return _disaggregated(info, where)
    if "model_path" not in info:
        return Server()
    if info.get("disaggregation_mode") not in (None, "null"):
        # One pool's server benchmarked on its own: its arguments are not the deployment's.
        return Server(_model(info), notes={"server_role": info["disaggregation_mode"]})
    deployment: dict[str, Any] = {
        "engine": drop_none({"name": "sglang", "version": info.get("version")}),
        "parallelism": drop_none(
            {
                "tp": info.get("tp_size"),
                "pp": info.get("pp_size"),
                "ep": info.get("ep_size"),
                "dp": info.get("dp_size"),
                "dp_attention": info.get("enable_dp_attention"),
            }
        ),
        **_speculative(info),
    }
    notes: dict[str, Any] = {}
    tp, pp, dp = info.get("tp_size"), info.get("pp_size") or 1, info.get("dp_size") or 1
    if isinstance(tp, int) and isinstance(pp, int) and dp == 1:
        # One engine of tp x pp ranks, one GPU each (sglang's launch_server); with DP
        # replicas the count depends on DP attention, so it is left to the facts.
        deployment["gpus"] = tp * pp
        notes["gpus_from"] = "server_info tp_size x pp_size (dp_size 1)"
    if isinstance(info.get("nnodes"), int):
        deployment["multinode"] = info["nnodes"] > 1
    return Server(_model(info), deployment, notes)


def _disaggregated(info: dict[str, Any], where: str) -> Server:
    """A prefill/decode router's answer: its workers' arguments, by role."""
    pools: dict[str, dict[str, Any]] = {}
    workers: dict[str, list[dict[str, Any]]] = {}
    for role in ("prefill", "decode"):
        listed = info.get(role)
        if not isinstance(listed, list) or not all(isinstance(w, dict) for w in listed):
            raise ImportFailure(f"{where}: server_info.{role} should be a list of servers")
        for worker in listed:
            if worker.get("disaggregation_mode") != role:
                raise ImportFailure(
                    f"{where}: a server_info.{role} server says disaggregation_mode "
                    f"{worker.get('disaggregation_mode')!r}"
                )
        workers[role] = listed
        layouts = {
            json.dumps(
                drop_none(
                    {
                        "tp": w.get("tp_size"),
                        "ep": w.get("ep_size"),
                        "dp_attention": w.get("enable_dp_attention"),
                    }
                ),
                sort_keys=True,
            )
            for w in listed
        }
        # One layout for the pool when its servers agree; otherwise the pool's is not stated.
        pools[role] = json.loads(layouts.pop()) if len(layouts) == 1 else {}
    everyone = workers["prefill"] + workers["decode"]
    models = {_model(w) for w in everyone}
    versions = {w.get("version") for w in everyone}
    deployment: dict[str, Any] = {
        "engine": drop_none(
            {"name": "sglang", "version": versions.pop() if len(versions) == 1 else None}
        ),
        "disaggregation": pools,
    }
    if everyone and all(w.get("speculative_algorithm") is None for w in everyone):
        deployment["speculative"] = None
    notes = {
        "servers_listed": {role: len(listed) for role, listed in workers.items()},
        "server_versions": {
            role: [w.get("version") for w in listed] for role, listed in workers.items()
        },
        "transfer_backend": {
            role: sorted({str(w.get("disaggregation_transfer_backend")) for w in listed})
            for role, listed in workers.items()
        },
    }
    return Server(models.pop() if len(models) == 1 else None, deployment, notes)


def _model(info: dict[str, Any]) -> str | None:
    name = info.get("served_model_name") or info.get("model_path")
    return str(name) if name else None


def _speculative(info: dict[str, Any]) -> dict[str, Any]:
    """The speculative decoding a server states: none, or its algorithm."""
    if "speculative_algorithm" not in info:
        return {}
    algorithm = info["speculative_algorithm"]
    return {"speculative": {"method": str(algorithm).lower()} if algorithm else None}


def _sent_means(job: ImportInput, row: dict[str, Any], where: str) -> Derived | None:
    """For a dataset without set lengths (sharegpt ...): the mean lengths the run sent."""
    completed = integer(row, "completed", where)
    total_in = integer(row, "total_input_tokens", where)
    total_out = integer(row, "total_output_tokens", where)
    if not completed or not total_in or not total_out:
        return None
    means = {"input_tokens": total_in / completed, "output_tokens": total_out / completed}
    return lengths_from_means(job, means, completed, DERIVED)


def _point(row: dict[str, Any], where: str) -> tuple[dict[str, Any], dict[str, Any], dict]:
    latency, unslotted, consumed = latency_stats(row, METRICS, where)
    check_keys(
        {k: v for k, v in row.items() if k not in consumed}, KNOWN, where, ("duration", "completed")
    )
    for key, value in row.items():
        # Infinity is only legitimate as request_rate; anywhere else it is a broken value.
        if key != "request_rate" and isinstance(value, float) and not math.isfinite(value):
            raise ImportFailure(f"{where}: field {key} is {value}, not a finite number")

    rate = row.get("request_rate")
    if rate == "trace":
        raise ImportFailure(f"{where}: request_rate 'trace' (trace replay) is not supported")
    if rate is not None and (isinstance(rate, bool) or not isinstance(rate, int | float)):
        raise ImportFailure(f"{where}: request_rate should be a number, got {rate!r}")
    requested = rate if rate is not None and math.isfinite(rate) else None
    open_loop = rate_bound(
        requested,
        integer(row, "max_concurrency", where),
        number(row, "request_throughput", where),
    )

    lists = request_lists(row, where)
    point: dict[str, Any] = {
        "concurrency": integer(row, "max_concurrency", where),
        "request_rate": rate if open_loop else None,
        "window_s": number(row, "duration", where),
        # Without per-request arrays sglang states only successes (`completed`): how many
        # were sent, and so how many failed, is not in the line.
        "requests": counts_from_lists(lists)
        if lists
        else {"total": None, "succeeded": integer(row, "completed", where), "failed": None},
        "tokens": benchjson.token_totals(row, where),
        "throughput": {
            "requests_per_s": number(row, "request_throughput", where),
            "input_tok_s": number(row, "input_throughput", where),
            "output_tok_s": number(row, "output_throughput", where),
            "total_tok_s": number(row, "total_throughput", where),
        },
        "latency_ms": latency,
    }
    if lists:
        point["records"] = records(lists, where)
    point = drop_none(point)
    point["tokens"] = drop_none(point["tokens"])
    point["throughput"] = drop_none(point["throughput"])

    extra = {
        key: row[key]
        for key in (
            "tag",
            "backend",
            "concurrency",
            "accept_length",
            "max_output_tokens_per_s",
            "max_concurrent_requests",
            "total_output_tokens_retokenized",
            "server_info",
        )
        if row.get(key) is not None
    }
    if unslotted:
        extra["latency_stats_without_slot_ms"] = unslotted
    if requested is not None:
        extra["requested_rate"] = requested  # beside the achieved request_throughput
    return point, _scenario(row, where, open_loop), extra


def _scenario(row: dict[str, Any], where: str, open_loop: bool) -> dict[str, Any]:
    dataset = row.get("dataset_name")
    scenario: dict[str, Any] = {"arrival": "open" if open_loop else "closed"}
    if dataset:
        scenario["dataset"] = dataset_name(dataset)
    if dataset not in RANDOM_DATASETS:
        # random_input_len and friends are argparse defaults here, not what was sent.
        return scenario
    ratio = number(row, "random_range_ratio", where)
    in_len = integer(row, "random_input_len", where)
    out_len = integer(row, "random_output_len", where)
    if ratio is None or in_len is None or out_len is None:
        raise ImportFailure(
            f"{where}: a random-dataset run needs random_input_len, random_output_len "
            "and random_range_ratio"
        )
    if not 0 <= ratio <= 1:
        raise ImportFailure(f"{where}: random_range_ratio {ratio} is outside [0, 1]")
    # sglang draws lengths uniformly from [L * ratio, L]: mean L(1+r)/2, spread (1-r)/(1+r).
    scenario["input_tokens"] = round(in_len * (1 + ratio) / 2)
    scenario["output_tokens"] = max(1, round(out_len * (1 + ratio) / 2))
    scenario["length_spread"] = (1 - ratio) / (1 + ratio)
    return scenario


register(
    Format(
        name="sglang-bench-serving",
        tool=TOOL,
        summary="sglang bench_serving JSONL (one line per run; *_ms latencies)",
        sniff=_sniff,
        parse=parse,
    )
)
