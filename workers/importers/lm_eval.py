"""EleutherAI lm-evaluation-harness `results_<timestamp>.json` (+ `samples_<task>_*.jsonl`).

Reads the output of lm-eval 0.4.x (`--output_path`, with `--log_samples` for samples), as
written by `lm_eval/loggers/evaluation_tracker.py`: `results` maps each task to metric keys
named `<metric>,<filter>` (e.g. `exact_match,strict-match`) and their
`<metric>_stderr,<filter>` ("N/A" when none), plus `alias`; `n-samples` gives original and
effective item counts, `n-shot` and `versions` the protocol, `config` the model and
generation arguments, `task_hashes` a hash of the task's data. Group rows (`groups`) are
aggregates of tasks already present and are not imported.

Each samples line is one item under one filter: doc_id, target, filtered_resps, filter,
metrics (names) and the value of each metric. With samples, every binary metric
(value 0 or 1) gets per-item outcomes, so paired comparisons work on imported runs.
Only per-item right/wrong metrics (acc, acc_norm, exact_match ...) are proportions with an
n (and so a binomial interval downstream); every other metric (f1, bleu, rouge, perplexity,
mc2 ...) is stored as kind "score": its value as written, its stderr, no n. From 0.4.12 a
task row also carries `name` and `sample_len` (the number of items), which are read.

The deployment facts the file states (GPU model, GPU count, backend, weight dtype) are
derived from its config and pretty_env_info (lm_eval_env.py), labelled as derived.
"""

from __future__ import annotations

import re
from typing import Any

from workers.importers.common import (
    ImportInput,
    PeerFile,
    build_document,
    companion_alone,
    drop_none,
    expect_object,
    load_json,
    load_jsonl,
    object_at,
)
from workers.importers.errors import ImportFailure
from workers.importers.lm_eval_env import model_args, stated_deployment
from workers.importers.registry import Format, Preview, register
from workers.results import ResultDocument

TOOL = "lm-evaluation-harness 0.4.x"
# Metrics that score each item right or wrong: their mean is a proportion of n items.
PROPORTIONS = {"acc", "acc_norm", "exact_match", "acc_mutual_info", "mc1", "pass@1"}
# Non-metric keys of a task row (0.4.12 added name and sample_len).
ROW_INFO = {"alias", "name", "sample_len"}

TOP_LEVEL = {
    "results",
    "groups",
    "group_subtasks",
    "configs",
    "versions",
    "n-shot",
    "higher_is_better",
    "n-samples",
    "config",
    "git_hash",
    "date",
    "pretty_env_info",
    "transformers_version",
    "lm_eval_version",
    "upper_git_hash",
    "tokenizer_pad_token",
    "tokenizer_eos_token",
    "tokenizer_bos_token",
    "eot_token_id",
    "max_length",
    "task_hashes",
    "model_source",
    "model_name",
    "model_name_sanitized",
    "system_instruction",
    "system_instruction_sha",
    "fewshot_as_multiturn",
    "chat_template",
    "chat_template_sha",
    "start_time",
    "end_time",
    "total_evaluation_time_seconds",
}
SAMPLE_KEYS = {
    "doc_id",
    "doc",
    "target",
    "arguments",
    "resps",
    "filtered_resps",
    "filter",
    "metrics",
    "doc_hash",
    "prompt_hash",
    "target_hash",
    "task_name",
}
SAMPLES_NAME = re.compile(r"samples_(.+?)_\d{4}-\d{2}-\d{2}T[\d\-.]+\.jsonl$")


def _sniff(seen: Preview) -> bool:
    row = seen.value
    return isinstance(row, dict) and "results" in row and ("n-samples" in row or "versions" in row)


def _sniff_samples(seen: Preview) -> bool:
    row = seen.first_line
    return isinstance(row, dict) and {"doc_id", "filtered_resps", "filter"} <= set(row)


def _model_name(doc: dict[str, Any]) -> str | None:
    if isinstance(doc.get("model_name"), str) and doc["model_name"]:
        return doc["model_name"]
    args = model_args(doc.get("config") or {})
    return args.get("pretrained") or args.get("model")


def parse(job: ImportInput) -> list[ResultDocument]:
    where = job.main.name
    doc = expect_object(load_json(job.main), where)
    if "config_general" in doc:
        # lighteval also writes "results" and "versions", with its own config_* / summary_*.
        raise ImportFailure(
            f"{where}: this looks like a lighteval results file (config_general, "
            "summary_tasks), which we do not read; we read lm-evaluation-harness 0.4.x"
        )
    unknown = sorted(k for k in doc if k not in TOP_LEVEL)
    if unknown:
        raise ImportFailure(f"{where}: unknown field(s) {', '.join(unknown)}")
    results = expect_object(doc["results"], f"{where} results")
    if "n-samples" not in doc and not any(
        "," in key for row in results.values() if isinstance(row, dict) for key in row
    ):
        # Up to 0.3 it wrote bare metric names (acc, acc_stderr) and no n-samples (no counts).
        raise ImportFailure(
            f"{where}: this looks like lm-evaluation-harness 0.3 or earlier output (metric keys "
            "without ',<filter>', no n-samples), which we do not read; we read 0.4.x"
        )
    samples = _samples_by_task(job.companions, set(results))

    # lm-eval repeats a group's row (also under `groups`) in `results`; its numbers aggregate
    # subtasks imported on their own, and from 0.4.12 it carries a per-metric sample_count.
    groups = {g for g, subtasks in (doc.get("group_subtasks") or {}).items() if subtasks}
    accuracy: list[dict[str, Any]] = []
    for task, row in results.items():
        if task in groups:
            continue
        row = expect_object(row, f"{where} results.{task}")
        accuracy.extend(_task_results(doc, task, row, samples.get(task), where))
    if not accuracy:
        raise ImportFailure(f"{where}: no metric to import")
    unused = set(samples) - set(results)
    if unused:
        raise ImportFailure(f"samples for task(s) {', '.join(sorted(unused))} not in {where}")

    config = doc.get("config") or {}
    extra = {
        "lm_eval_version": doc.get("lm_eval_version"),
        "git_hash": doc.get("git_hash"),
        "model_source": doc.get("model_source") or config.get("model"),
        "limit": config.get("limit"),
        "gen_kwargs": config.get("gen_kwargs"),
        "total_evaluation_time_seconds": doc.get("total_evaluation_time_seconds"),
        # How many items each task scored (of how many it has), kept for every task: a score
        # (F1, BLEU ...) carries no n, and --limit runs score a sample of the task.
        "n_samples": _sample_counts(doc, results, groups) or None,
    }
    deployment, derived = stated_deployment(doc)
    if derived:
        extra["deployment_derived"] = derived
    return [
        build_document(
            job,
            tool=TOOL,
            model_stated=_model_name(doc),
            deployment_stated=deployment,
            accuracy=accuracy,
            environment={"extra": drop_none(extra)},
        )
    ]


def _sample_counts(
    doc: dict[str, Any], results: dict[str, Any], groups: set[str]
) -> dict[str, dict[str, int]]:
    """Per task: lm-eval's n-samples (original, effective), else the row's sample_len."""
    stated = doc.get("n-samples") or {}
    counts: dict[str, dict[str, int]] = {}
    for task, row in results.items():
        if task in groups:
            continue
        given = object_at(stated, task)
        kept = {k: v for k, v in given.items() if k in ("original", "effective")}
        if not kept and isinstance(row, dict) and isinstance(row.get("sample_len"), int):
            kept = {"effective": row["sample_len"]}
        if kept:
            counts[task] = kept
    return counts


def _task_results(
    doc: dict[str, Any],
    task: str,
    row: dict[str, Any],
    samples: list[dict[str, Any]] | None,
    where: str,
) -> list[dict[str, Any]]:
    version = (doc.get("versions") or {}).get(task)
    shots = (doc.get("n-shot") or {}).get(task)
    counts = (doc.get("n-samples") or {}).get(task) or {}
    protocol = f"lm-eval/{task}" + (f"@v{version}" if version is not None else "")
    protocol += f"/{shots}-shot" if shots is not None else ""
    out = []
    sample_len = row.get("sample_len")
    if sample_len is not None and (isinstance(sample_len, bool) or not isinstance(sample_len, int)):
        raise ImportFailure(f"{where}: results.{task}.sample_len should be a whole number")
    n_items = counts.get("effective", sample_len)
    for key, value in row.items():
        if key in ROW_INFO or "_stderr," in key:
            continue
        if "," not in key:
            raise ImportFailure(f"{where}: results.{task}.{key} is not '<metric>,<filter>'")
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ImportFailure(f"{where}: results.{task}.{key} should be a number, got {value!r}")
        metric, filter_name = key.split(",", 1)
        proportion = metric in PROPORTIONS
        if proportion and not 0 <= value <= 1:
            raise ImportFailure(f"{where}: results.{task}.{key} is {value}, not in [0, 1]")
        stderr = row.get(f"{metric}_stderr,{filter_name}")
        result: dict[str, Any] = {
            "protocol": protocol[:200],
            "task": task,
            "metric": key,
            "kind": "proportion" if proportion else "score",
            "n": n_items if proportion else None,
            "score": value,
            "stderr": stderr if isinstance(stderr, int | float) and stderr >= 0 else None,
            "data_hash": (doc.get("task_hashes") or {}).get(task),
        }
        if samples is not None and proportion:
            items = _items(samples, metric, filter_name)
            if items:
                result["items"] = items
                result["correct"] = sum(1 for i in items if i["correct"])
        out.append(drop_none(result))
    return out


def _samples_by_task(companions: tuple[PeerFile, ...], tasks: set[str]) -> dict[str, list]:
    by_task: dict[str, list] = {}
    for peer in companions:
        rows = load_jsonl(peer)
        match = SAMPLES_NAME.search(peer.name)
        task = match.group(1) if match else None
        if task is None:
            named = {row.get("task_name") for row in rows if isinstance(row, dict)}
            task = named.pop() if len(named) == 1 and None not in named else None
        if task is None and len(tasks) == 1:
            task = next(iter(tasks))
        if task is None:
            raise ImportFailure(
                f"{peer.name}: cannot tell which task these samples belong to; name the file "
                "samples_<task>_<timestamp>.jsonl as lm-eval does"
            )
        for number_, row in enumerate(rows, start=1):
            where = f"{peer.name} line {number_}"
            row = expect_object(row, where)
            extra = set(row) - SAMPLE_KEYS - set(row.get("metrics") or [])
            if extra:
                raise ImportFailure(f"{where}: unknown field(s) {', '.join(sorted(extra))}")
            if "doc_id" not in row or "filter" not in row:
                raise ImportFailure(f"{where}: missing doc_id or filter")
        by_task.setdefault(task, []).extend(rows)
    return by_task


def _items(rows: list[dict[str, Any]], metric: str, filter_name: str) -> list[dict[str, Any]]:
    items = []
    for row in rows:
        if row["filter"] != filter_name or metric not in row:
            continue
        value = row[metric]
        if value not in (0, 1):
            return []  # not a per-item right/wrong metric
        filtered = row.get("filtered_resps")
        extracted = filtered[0] if isinstance(filtered, list) and filtered else filtered
        item: dict[str, Any] = {"item_id": str(row["doc_id"]), "correct": value == 1}
        if isinstance(extracted, str):
            item["extracted"] = extracted[:500]
        if row.get("target") is not None:
            item["gold"] = str(row["target"])[:500]
        items.append(item)
    return items


def _samples_alone(job: ImportInput) -> list[ResultDocument]:
    return companion_alone(job, "these are lm-eval samples", "the results_<timestamp>.json")


register(
    Format(
        name="lm-eval",
        tool=TOOL,
        summary="lm-evaluation-harness results JSON (+ samples JSONL via --records)",
        sniff=_sniff,
        parse=parse,
    )
)
register(
    Format(
        name="lm-eval-samples",
        tool=TOOL,
        summary="lm-evaluation-harness samples JSONL (only as --records of a results file)",
        sniff=_sniff_samples,
        parse=_samples_alone,
    )
)
