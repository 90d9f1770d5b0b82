"""InferenceX runner results as the together_runner writes them: one JSON object per run.

`together_runner/compare.py emit` (SemiAnalysisAI/InferenceX pull request 1713, kept in its
togethercomputer/InferenceX fork, commit 2a6a04c0) maps one raw `benchmark_serving.py` output
to a result it calls "InferenceX-schema": the run's identity at the top (hw, cluster, host,
model, framework, precision, isl, osl, tp, ep, conc, profile, image, tuning, ts) and two
blocks, `metrics` and `gpu`. Its `analysis/results_lib.py` (5b4de1be) writes the same nested
shape, with `source: "recipe"`, for records converted from InferenceX's own flat aggregate.

Read from the writer's code, not guessed:
- `metrics` copies the benchmark's own figures: `total_token_throughput`,
  `output_token_throughput` and `request_throughput` are the deployment's totals over the
  run (benchmark_serving's), never per GPU; `successful_requests` is its `completed`
  (successes only: failures are not counted). The `*_ms` statistics are milliseconds. A
  `source: "recipe"` record's totals were rebuilt by results_lib as InferenceX's per-GPU
  figures x TP, which it states beside them.
- The deployment serves on TP GPUs (run_2_launch_server.sh: `--tensor-parallel-size $TP`,
  vLLM `--data-parallel-size 1`); `ep` 0 means expert parallelism off.
- `gpu` is the host's power, sampled by `nvidia-smi` over every GPU of the host (no `-i`):
  its `n_gpus` counts the host's GPUs, not the deployment's (a TP4 run on an 8-GPU host says
  8), so it is kept as written, never used as the GPU count.
- `isl`/`osl` are the random dataset's lengths (run_3_test_client.sh).
A key this reader does not know is refused by name: it may carry a measurement.
"""

from __future__ import annotations

from typing import Any

from workers.importers.accelerators import runner_sku
from workers.importers.common import (
    ImportInput,
    build_document,
    check_keys,
    drop_none,
    expect_object,
    integer,
    load_json,
    number,
)
from workers.importers.errors import ImportFailure
from workers.importers.inferencex_rows import row_engine
from workers.importers.registry import Format, Preview, register
from workers.results import ResultDocument

TOOL = "InferenceX together_runner result (compare.py emit, 2a6a04c0)"
TOP = {
    "hw", "cluster", "host", "ts", "model", "framework", "precision", "isl", "osl", "tp",
    "ep", "conc", "profile", "image", "tuning", "source", "metrics", "gpu",
}  # fmt: skip
REQUIRED = ("hw", "model", "framework", "precision", "isl", "osl", "tp", "conc", "metrics")
THROUGHPUT = {
    "total_token_throughput": "total_tok_s",
    "output_token_throughput": "output_tok_s",
    "request_throughput": "requests_per_s",
}
# <stat>_<metric>_ms -> (our metric, our slot)
LATENCY = {
    f"{stat}_{metric}_ms": (metric, slot)
    for stat, slot in (("median", "p50"), ("p99", "p99"), ("mean", "mean"))
    for metric in ("ttft", "tpot", "itl", "e2el")
}
METRICS = {"successful_requests", *THROUGHPUT, *LATENCY}
GPU = {"n_gpus", "mean_power_per_gpu_w", "total_avg_power_w", "peak_power_per_gpu_w",
       "tokens_per_kw"}  # fmt: skip


def _sniff(seen: Preview) -> bool:
    row = seen.value
    return (
        isinstance(row, dict)
        and isinstance(row.get("metrics"), dict)
        and "hw" in row
        and "conc" in row
        and "framework" in row
    )


def parse(job: ImportInput) -> list[ResultDocument]:
    where = job.main.name
    row = expect_object(load_json(job.main), where)
    check_keys(row, TOP, where, required=REQUIRED)
    metrics = expect_object(row["metrics"], f"{where} metrics")
    check_keys(metrics, METRICS, f"{where} metrics")
    gpu = expect_object(row.get("gpu") or {}, f"{where} gpu")
    check_keys(gpu, GPU, f"{where} gpu")
    tp = integer(row, "tp", where)
    ep = integer(row, "ep", where)
    if not tp:
        raise ImportFailure(f"{where}: field tp should be a positive whole number")
    deployment = {
        "accelerator": runner_sku(str(row["hw"])),
        "gpus": tp,
        "engine": row_engine(row) if row["framework"] else {},
        "quantization": {"weights": str(row["precision"]).upper()} if row["precision"] else {},
        # ep 0 is the runner's "expert parallelism off" (config.env: EP_SIZE=0).
        "parallelism": drop_none({"tp": tp, "ep": ep or None}),
    }
    latency: dict[str, dict[str, float]] = {}
    for key, (metric, slot) in LATENCY.items():
        value = number(metrics, key, f"{where} metrics")
        if value is not None:
            latency.setdefault(metric, {})[slot] = value
    succeeded = integer(metrics, "successful_requests", f"{where} metrics")
    named = f"{where} metrics"
    rates = {ours: number(metrics, theirs, named) for theirs, ours in THROUGHPUT.items()}
    point = {
        "concurrency": integer(row, "conc", where),
        "requests": None if succeeded is None else {"succeeded": succeeded},
        "throughput": drop_none(rates),
        "latency_ms": latency,
    }
    scenario = {
        "input_tokens": integer(row, "isl", where),
        "output_tokens": integer(row, "osl", where),
        "dataset": "random",
        "arrival": "closed",
    }
    extra: dict[str, Any] = {
        key: row[key]
        for key in ("hw", "cluster", "host", "ts", "profile", "image", "tuning", "source")
        if row.get(key) not in (None, "")
    }
    if gpu:
        # The host's GPUs as nvidia-smi saw them all, not the deployment's: kept as written.
        extra["host_gpu_power"] = gpu
    if row.get("source") == "recipe":
        extra["totals_from"] = "InferenceX's per-GPU figures x TP (results_lib.adapt_flat)"
    return [
        build_document(
            job,
            tool=TOOL,
            model_stated=str(row["model"]),
            deployment_stated=deployment,
            scenario_stated=drop_none(scenario),
            points=[drop_none(point)],
            environment={"extra": extra},
        )
    ]


register(
    Format(
        name="inferencex-runner-result",
        tool=TOOL,
        summary="InferenceX runner result, one object per run (hw, cluster, host, metrics, gpu)",
        sniff=_sniff,
        parse=parse,
    )
)
