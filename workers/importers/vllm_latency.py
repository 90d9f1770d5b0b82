"""vLLM's offline latency benchmark: `vllm bench latency --output-json` (and its earlier
`benchmarks/benchmark_latency.py`): a latency-only run.

The benchmark (vllm/benchmarks/latency.py) builds one batch of `--batch-size` dummy prompts of
`--input-len` tokens, asks each for exactly `--output-len` tokens (SamplingParams
`ignore_eos=True, max_tokens=output_len`), and times `llm.generate` on the whole batch
`--num-iters` times after warm-up. It writes `avg_latency` (the mean), `latencies` (one per
iteration, SECONDS) and `percentiles` ({"10", "25", "50", "75", "90", "99"}: numpy's
percentiles of those latencies). Every request of a batch ends with it, so an iteration's
latency is each of its requests' end-to-end latency: the point's e2el distribution, computed
here from the iterations (linear, as numpy does) and checked against the percentiles the file
states.

Not stated, so never invented: throughput (tokens over a batch latency would be a figure the
file does not state), the batch size and the lengths (arguments the JSON does not keep: the
user gives the lengths; the batch size stays unstated), failures (the offline engine raises
rather than fail a request), the model and the hardware. The engine is vLLM: the benchmark
runs vLLM's own engine in-process.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from workers.importers.common import (
    ImportInput,
    build_document,
    check_keys,
    expect_object,
    load_json,
    number,
)
from workers.importers.errors import ImportFailure
from workers.importers.registry import Format, Preview, register
from workers.loadgen.metrics import distribution
from workers.results import ResultDocument

TOOL = "vLLM benchmark_latency.py / vllm bench latency (--output-json, 2024-2026 layout)"
KEYS = ("avg_latency", "latencies", "percentiles")
PERCENTILES = ("10", "25", "50", "75", "90", "99")
METHOD = "linear, over the file's per-iteration batch latencies"


def _sniff(seen: Preview) -> bool:
    row = seen.value
    return isinstance(row, dict) and set(KEYS) <= set(row) and isinstance(row["latencies"], list)


def parse(job: ImportInput) -> list[ResultDocument]:
    where = job.main.name
    doc = expect_object(load_json(job.main), where)
    check_keys(doc, KEYS, where, required=KEYS)
    latencies = _latencies(doc["latencies"], where)
    if not latencies:
        raise ImportFailure(f"{where}: latencies is empty: the file holds no measurement")
    stated = expect_object(doc["percentiles"], f"{where} percentiles")
    check_keys(stated, PERCENTILES, f"{where} percentiles", required=PERCENTILES)
    _check_stated(doc, stated, latencies, where)
    e2el = distribution(value * 1000.0 for value in latencies)
    assert e2el is not None
    e2el.method = METHOD
    point: dict[str, Any] = {
        "label": f"{len(latencies)} iterations",
        "throughput": {},
        "latency_ms": {"e2el": e2el.model_dump(exclude_none=True)},
    }
    extra = {
        "latency_is": "one batch iteration of llm.generate (every request of the batch ends "
        "with it), in seconds as written",
        "iterations": len(latencies),
        "percentiles_as_written": stated,
        "avg_latency_as_written": doc["avg_latency"],
    }
    return [
        build_document(
            job,
            tool=TOOL,
            model_stated=None,
            deployment_stated={"engine": {"name": "vllm"}},
            scenario_stated={"arrival": "closed", "dataset": "random"},
            points=[point],
            environment={"extra": extra},
        )
    ]


def _latencies(values: Any, where: str) -> list[float]:
    if not isinstance(values, list):
        raise ImportFailure(f"{where}: latencies should be a list of seconds")
    out = []
    for index, value in enumerate(values):
        seconds = number({"latency": value}, "latency", f"{where} latencies[{index}]")
        if seconds is None or seconds <= 0:
            raise ImportFailure(f"{where} latencies[{index}]: expected a positive number")
        out.append(seconds)
    return out


def _check_stated(
    doc: dict[str, Any], stated: dict[str, Any], latencies: list[float], where: str
) -> None:
    """The mean and percentiles the file states are numpy's of its latencies, or the file
    is not what it says (edited by hand, or another tool's), and it is refused."""
    expected = {"avg_latency": float(np.mean(latencies))}
    expected |= {f"percentiles.{p}": float(np.percentile(latencies, float(p))) for p in PERCENTILES}
    written = {"avg_latency": number(doc, "avg_latency", where)}
    written |= {f"percentiles.{p}": number(stated, p, f"{where} percentiles") for p in PERCENTILES}
    for name, value in written.items():
        if value is None or not math.isclose(value, expected[name], rel_tol=1e-9):
            raise ImportFailure(
                f"{where}: {name} is {value}, but the latencies give {expected[name]}"
            )


register(
    Format(
        name="vllm-bench-latency",
        tool=TOOL,
        summary="vLLM bench latency JSON (avg_latency, latencies, percentiles): latency only",
        sniff=_sniff,
        parse=parse,
    )
)
