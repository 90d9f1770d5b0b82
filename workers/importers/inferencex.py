"""SemiAnalysis InferenceX files: vLLM-style serving summaries and accuracy eval records.

`inferencex-summary` reads the result JSON written by InferenceX's
`experimental/token_position_decode_slo/benchmark_serving_random.py` (SemiAnalysisAI/InferenceX,
commit 843c6254, 2026-08-21). It looks like vLLM's `bench serve` output but is not: its
latency keys have no `_ms` suffix and hold SECONDS (the script prints "Median TTFT (s)" and
stores `time.perf_counter()` differences), and it keeps only median and p99. We convert to
milliseconds because the script's source says seconds, not because of the magnitudes.

`inferencex-evals` reads `packages/db/data/supplemental-evals.json` of
SemiAnalysisAI/InferenceX-app (commit 77ca49a, 2026-04-03): a JSON array of gsm8k records,
one per deployment (model, hw, framework, precision, tp, ep, dp_attention, spec_decoding,
conc) with em_strict / em_flexible, their standard errors and n_eff. Each record becomes its
own document (records differ in deployment, and a document describes one deployment); its
idempotency key is the file's key plus ':<record index>'. Records do not state the GPU
count or the engine version: give `gpus: tp` in the facts to say each deployment used TP
GPUs, or a number.
"""

from __future__ import annotations

import re
from typing import Any

from workers.importers.benchjson import SERVING_KEYS, token_totals
from workers.importers.common import (
    ImportInput,
    build_document,
    check_keys,
    drop_none,
    expect_object,
    integer,
    load_json,
    number,
    rate_bound,
    require_keys,
    to_ms,
)
from workers.importers.errors import ImportFailure
from workers.importers.inferencex_rows import row_flag, row_sku
from workers.importers.registry import Format, Preview, register
from workers.results import ResultDocument

SUMMARY_TOOL = "InferenceX benchmark_serving_random.py (843c6254)"
EVALS_TOOL = "InferenceX-app supplemental-evals.json (77ca49a)"

SUMMARY_KEYS = SERVING_KEYS | {
    "good_completed",
    "input_throughput",
    "median_ttft",
    "p99_ttft",
    "median_e2el",
    "p99_e2el",
    "median_tpot",
    "p99_tpot",
}
SUMMARY_REQUIRED = ("model_id", "num_prompts", "duration", "completed", "median_ttft")


# The result file names state the deployment and shape, e.g. glm5_fp8_vllm_tp8_isl1024_
# osl128_conc16.json or minimax_m25_vllm_tep8_isl1024_osl128_conc4.json (tep: TP with EP;
# dep: DP with EP).
SUMMARY_NAME = re.compile(
    r"_(?:(?P<precision>fp8|fp4|bf16|fp16|int4|int8|mxfp4|nvfp4)_)?(?P<framework>vllm|sglang)"
    r"_(?P<layout>tp|tep|dep)(?P<size>\d+)_isl(?P<isl>\d+)_osl(?P<osl>\d+)_conc(?P<conc>\d+)",
    re.IGNORECASE,
)


def _name_facts(filename: str) -> tuple[dict[str, Any], dict[str, Any], int | None]:
    """(deployment, scenario, concurrency) the file name states; empty when it has none."""
    named = SUMMARY_NAME.search(filename)
    if not named:
        return {}, {}, None
    size = int(named["size"])
    layout = named["layout"].lower()
    parallelism = {
        "tp": {"tp": size},
        "tep": {"tp": size, "ep": size},
        "dep": {"dp": size, "ep": size},
    }[layout]
    deployment: dict[str, Any] = {
        "gpus": size,
        "engine": {"name": named["framework"].lower()},
        "parallelism": parallelism,
    }
    if named["precision"]:
        deployment["quantization"] = {"weights": named["precision"].upper()}
    scenario = {"input_tokens": int(named["isl"]), "output_tokens": int(named["osl"])}
    return deployment, scenario, int(named["conc"])


def _sniff_summary(seen: Preview) -> bool:
    row = seen.value
    return isinstance(row, dict) and "median_ttft" in row and "model_id" in row


def _metadata(row: dict[str, Any], where: str) -> dict[str, str]:
    """`--metadata KEY=VALUE` pairs land as extra string keys; anything else is unknown."""
    extra = {k: v for k, v in row.items() if k not in SUMMARY_KEYS}
    not_strings = sorted(k for k, v in extra.items() if not isinstance(v, str))
    if not_strings:
        raise ImportFailure(f"{where}: unknown field(s) {', '.join(not_strings)}")
    return extra


def parse_summary(job: ImportInput) -> list[ResultDocument]:
    where = job.main.name
    row = expect_object(load_json(job.main), where)
    metadata = _metadata(row, where)
    require_keys(row, SUMMARY_REQUIRED, where)  # unknown keys were refused by _metadata

    prompts = integer(row, "num_prompts", where)
    completed = integer(row, "completed", where)
    if prompts is None or completed is None or completed > prompts:
        raise ImportFailure(f"{where}: completed ({completed}) exceeds num_prompts ({prompts})")
    rate = row.get("request_rate")
    if rate not in ("inf", None) and number(row, "request_rate", where) is None:
        raise ImportFailure(f"{where}: request_rate should be a number or 'inf', got {rate!r}")
    requested = None if rate in ("inf", None) else number(row, "request_rate", where)
    open_loop = rate_bound(
        requested,
        integer(row, "max_concurrency", where),
        number(row, "request_throughput", where),
    )

    def seconds(name: str) -> float | None:
        return to_ms(number(row, name, where), "s")

    latency = {
        metric: {
            key: value
            for key, value in (
                ("p50", seconds(f"median_{metric}")),
                ("p99", seconds(f"p99_{metric}")),
            )
            if value is not None
        }
        for metric in ("ttft", "e2el", "tpot")
    }
    point: dict[str, Any] = {
        "concurrency": integer(row, "max_concurrency", where),
        "request_rate": rate if open_loop else None,
        "window_s": number(row, "duration", where),
        "requests": {"total": prompts, "succeeded": completed, "failed": prompts - completed},
        "tokens": token_totals(row, where),
        "throughput": {
            "requests_per_s": number(row, "request_throughput", where),
            "input_tok_s": number(row, "input_throughput", where),
            "output_tok_s": number(row, "output_throughput", where),
        },
        "latency_ms": {k: v for k, v in latency.items() if v},
        "goodput_rps": number(row, "request_goodput", where),
    }
    environment: dict[str, Any] = {
        "extra": {
            "date": row.get("date"),
            "tokenizer_id": row.get("tokenizer_id"),
            "burstiness": row.get("burstiness"),
            "requested_rate": requested,
            # The script counts input with the local tokenizer, output from usage.
            "token_sources": {"input": "tokenizer", "output": "usage"},
            **({"metadata": metadata} if metadata else {}),
        }
    }
    deployment, shape, named_conc = _name_facts(job.main.name)
    if named_conc is not None and point["concurrency"] not in (None, named_conc):
        raise ImportFailure(
            f"{where}: max_concurrency is {point['concurrency']} but the file name says "
            f"conc{named_conc}"
        )
    # The script only ever sends random prompts (sample_random_requests).
    scenario = {
        "arrival": "open" if open_loop else "closed",
        "request_count": prompts,
        "dataset": "random",
        **shape,
    }
    return [
        build_document(
            job,
            tool=SUMMARY_TOOL,
            model_stated=row.get("model_id"),
            deployment_stated=deployment,
            scenario_stated=scenario,
            points=[_clean(point)],
            environment=environment,
        )
    ]


def _clean(tree: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            value = _clean(value)
        if value is not None and value != {}:
            out[key] = value
    return out


EVAL_KEYS = {
    "model_prefix",
    "model",
    "hw",
    "framework",
    "precision",
    "spec_decoding",
    "tp",
    "ep",
    "conc",
    "dp_attention",
    "task",
    "em_strict",
    "em_strict_se",
    "em_flexible",
    "em_flexible_se",
    "n_eff",
    "source",
    "score",
    "score_name",
    "score_se",
    "timestamp",
}
EVAL_REQUIRED = ("model", "hw", "framework", "precision", "task", "n_eff")
EVAL_METRICS = ("em_strict", "em_flexible")


def _sniff_evals(seen: Preview) -> bool:
    row = seen.first_item
    return isinstance(row, dict) and "hw" in row and "em_strict" in row


def parse_evals(job: ImportInput) -> list[ResultDocument]:
    rows = load_json(job.main)
    if not isinstance(rows, list) or not rows:
        raise ImportFailure(f"{job.main.name}: expected a non-empty JSON array of eval records")
    return [_eval_document(job, index, row) for index, row in enumerate(rows)]


def _eval_document(job: ImportInput, index: int, row: Any) -> ResultDocument:
    where = f"{job.main.name} record {index}"
    row = expect_object(row, where)
    check_keys(row, EVAL_KEYS, where, EVAL_REQUIRED)
    n = integer(row, "n_eff", where)
    accuracy = []
    for metric in EVAL_METRICS:
        score = number(row, metric, where)
        if score is None:
            continue
        accuracy.append(
            {
                "protocol": f"inferencex-{row['task']}",
                "task": row["task"],
                "metric": metric,
                "n": n,
                "score": score,
                "stderr": number(row, f"{metric}_se", where),
            }
        )
    if not accuracy:
        raise ImportFailure(f"{where}: neither em_strict nor em_flexible is present")
    if row.get("score_name") not in (None, *EVAL_METRICS):
        raise ImportFailure(f"{where}: unknown score_name {row['score_name']!r}")

    spec = row.get("spec_decoding")
    parallelism = {
        "tp": integer(row, "tp", where),
        "ep": integer(row, "ep", where),
        "dp_attention": row_flag(row.get("dp_attention"), "dp_attention", where),
    }
    deployment: dict[str, Any] = {
        "accelerator": row_sku(str(row["hw"])),
        "engine": {"name": row["framework"]},
        "quantization": {"weights": str(row["precision"]).upper()},
        "parallelism": drop_none(parallelism),
    }
    # "none" is a statement (no speculative decoding), kept as an explicit None; an empty
    # string says nothing, so the fact stays open for the user.
    if spec == "none":
        deployment["speculative"] = None
    elif spec:
        deployment["speculative"] = {"method": spec}
    extra = {
        key: row[key]
        for key in ("hw", "conc", "source", "timestamp", "model_prefix", "score_name")
        if key in row
    }
    return build_document(
        job,
        tool=EVALS_TOOL,
        model_stated=row["model"],
        deployment_stated=deployment,
        accuracy=accuracy,
        environment={"extra": extra},
        index=index,
        where=where,
    )


register(
    Format(
        name="inferencex-summary",
        tool=SUMMARY_TOOL,
        summary="InferenceX vLLM-style serving summary JSON (latencies in seconds)",
        sniff=_sniff_summary,
        parse=parse_summary,
    )
)
register(
    Format(
        name="inferencex-evals",
        tool=EVALS_TOOL,
        summary="InferenceX eval records (supplemental-evals.json), one document per record",
        sniff=_sniff_evals,
        parse=parse_evals,
    )
)
