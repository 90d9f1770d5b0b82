"""InferenceX's public API responses: `/api/v1/benchmarks`, `/benchmarks/history`, `/evaluations`.

Read from the responses as InferenceX-app serves them (snapshots committed as its Cypress
fixtures, e.g. vngcloud/InferenceX-app 7fe6d62 `packages/app/cypress/fixtures/api/`; see
`apps/catalog/reference/inferencex/SOURCES.md`). A benchmark row is one measurement: one
configuration (accelerator, engine, precision, speculative method, prefill and decode pools),
one input/output length pair, one concurrency, on one date in one CI run (`run_url`).

How rows become runs:
- Rows of the same configuration, lengths, date and CI run are one run, one point per
  concurrency (a sweep InferenceX ran together).
- A row is identified by its configuration, lengths, concurrency, date, CI run and the figures
  both responses state (the history response keeps a subset of the latest one's statistics,
  with identical values). The same row in the latest and the history response is one row;
  a row whose figures changed is a new row. `document_rows` skips rows already stored
  (`known`), so a sync never stores a row twice; each run lists its rows' keys in
  `environment.extra.inferencex.rows`.
- The run's idempotency key hashes its rows' keys: the same rows are the same run.

Units, as InferenceX's process_result.py writes them: latencies in seconds without a suffix
(converted to ms), throughputs in tokens per second per GPU of a stated pool: which pool, and
how they become whole-deployment totals, is `inferencex_pools`.

`*_intvty` are 1/TPOT transforms of the TPOT statistics (their p90 is below their median).
The median alone is also the median of per-request 1/TPOT (1/x is monotonic, so it keeps the
median's place), so it is our interactivity p50; the others are kept as written in
`environment.extra`, as are power and energy figures, which have no slot in the schema.

The image (engine release) is stated per row and changes over a configuration's history, so
it is kept with each run (`environment.extra.inferencex.image`) rather than in the deployment:
InferenceX's history is a configuration's series across images, and a deployment here is that
configuration, whose runs then show where the image changed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from workers.importers.accelerators import accelerator_sku
from workers.importers.common import ImportInput, drop_none, load_json
from workers.importers.engines import engine_as_written, engine_name
from workers.importers.errors import ImportFailure
from workers.importers.inferencex_pools import THROUGHPUTS, denominators, pool_words
from workers.importers.inferencex_recipe import recipe_extra, recipe_facts, recipe_of
from workers.importers.registry import Format, Preview, register
from workers.results import DocumentError, ResultDocument, parse_document
from workers.slo import STAT_SLOTS

TOOL = "InferenceX API"
# The configuration of a row: every key but the lengths, concurrency, figures and provenance.
IDENTITY = (
    "hardware",
    "framework",
    "model",
    "precision",
    "spec_method",
    "disagg",
    "is_multinode",
    "prefill_tp",
    "prefill_ep",
    "prefill_dp_attention",
    "prefill_num_workers",
    "decode_tp",
    "decode_ep",
    "decode_dp_attention",
    "decode_num_workers",
    "num_prefill_gpu",
    "num_decode_gpu",
)
BENCHMARK_KEYS = frozenset(
    (*IDENTITY, "isl", "osl", "conc", "image", "metrics", "workers", "date", "run_url")
)
BENCHMARK_REQUIRED = (*IDENTITY, "isl", "osl", "conc", "metrics", "date", "run_url")
EVALUATION_KEYS = frozenset(
    (*IDENTITY, "id", "config_id", "task", "date", "conc", "metrics", "timestamp", "run_url")
)
EVALUATION_REQUIRED = (*IDENTITY, "task", "date", "metrics", "run_url")
# The figures both responses state for every row (the history response's set): a row's
# identity includes them, so a changed figure makes a new row and nothing else does.
CORE_FIGURES = (
    "tput_per_gpu",
    "output_tput_per_gpu",
    "input_tput_per_gpu",
    "median_ttft",
    "p99_ttft",
    "median_tpot",
    "p99_tpot",
    "median_itl",
    "p99_itl",
    "median_e2el",
    "p99_e2el",
    "median_intvty",
    "p99_intvty",
)
LATENCY_METRICS = ("ttft", "tpot", "itl", "e2el")
STATISTICS = ("mean", "median", "std", "p90", "p99", "p99.9")
# Figures with no slot in the schema, kept as written per point.
KEPT_AS_WRITTEN = frozenset(
    {
        *(f"{stat}_intvty" for stat in STATISTICS if stat != "median"),
        "avg_power_w",
        "prefill_avg_power_w",
        "decode_avg_power_w",
        "avg_mem_used_mb",
        "avg_util_pct",
        "joules_per_total_token",
        "joules_per_output_token",
        "joules_per_input_token",
    }
)
KNOWN_FIGURES = frozenset(
    {
        *THROUGHPUTS,
        *(f"{stat}_{metric}" for stat in STATISTICS for metric in LATENCY_METRICS),
        "median_intvty",
        *KEPT_AS_WRITTEN,
    }
)
EVAL_METRICS = ("em_strict", "em_flexible")
# InferenceX's model keys and the names its dashboard shows for them
# (packages/constants/src/models.ts, DB_MODEL_TO_DISPLAY). Keys it shows under one name
# (glm5 and glm5.1 as "GLM-5") keep their own key as the name: they are different models.
MODEL_NAMES = {
    "dsr1": "DeepSeek-R1-0528",
    "dsv2lite": "DeepSeek-Coder-V2-Lite-Instruct",
    "gptoss120b": "gpt-oss-120b",
    "llama70b": "Llama-3.3-70B-Instruct-FP8",
    "qwen3.5": "Qwen-3.5-397B-A17B",
    "kimik3": "Kimi-K3",
    "minimaxm3": "MiniMax-M3",
    "glm5.2": "GLM-5.2",
    "dsv4": "DeepSeek-V4-Pro",
    "gemma4": "Gemma-4-31B",
}
MODEL_FAMILIES = {
    "kimik2.5": "Kimi-K2.5",
    "kimik2.6": "Kimi-K2.5",
    "kimik2.7-code": "Kimi-K2.5",
    "minimaxm2.5": "MiniMax-M2.5",
    "minimaxm2.7": "MiniMax-M2.5",
    "glm5": "GLM-5",
    "glm5.1": "GLM-5",
}
# The inferboard preset each InferenceX sequence is (apps/catalog/presets.py names them so).
PRESETS = {(1024, 1024): "1k-1k", (8192, 1024): "8k-1k", (1024, 8192): "1k-8k"}


@dataclass(frozen=True)
class Source:
    """Where the rows were read: a file of the repository or a URL, and when."""

    description: str  # e.g. "vngcloud/InferenceX-app 7fe6d62 packages/.../benchmarks.json"
    url: str = ""
    file_name: str = ""
    file_sha256: str = ""


@dataclass(frozen=True)
class BenchmarkRow:
    key: str
    group: str
    row: dict[str, Any]

    @property
    def stated_figures(self) -> int:
        return len(self.row["metrics"])


# --- reading rows ------------------------------------------------------------------------


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _digest(value: Any, size: int = 24) -> str:
    return hashlib.sha256(_canonical(value).encode()).hexdigest()[:size]


def _check_row(row: Any, where: str, known: frozenset[str], required: Iterable[str]) -> dict:
    if not isinstance(row, dict):
        raise ImportFailure(f"{where}: expected an object, got {type(row).__name__}")
    unknown = sorted(set(row) - known)
    if unknown:
        raise ImportFailure(f"{where}: unknown field(s) {', '.join(unknown)}")
    missing = [key for key in required if key not in row]
    if missing:
        raise ImportFailure(f"{where}: missing field(s) {', '.join(missing)}")
    if not isinstance(row["metrics"], dict):
        raise ImportFailure(f"{where}: metrics should be an object")
    for key, value in row["metrics"].items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ImportFailure(f"{where}: metrics.{key} should be a number, got {value!r}")
    try:
        datetime.strptime(str(row["date"]), "%Y-%m-%d")
    except ValueError:
        raise ImportFailure(f"{where}: date {row['date']!r} is not YYYY-MM-DD") from None
    return row


def _checked_rows(
    value: Any, where: str, what: str, known: frozenset[str], required: Iterable[str]
) -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, row) for each row of a response's JSON array of `what` rows, each checked
    field by field before it is read."""
    if not isinstance(value, list):
        raise ImportFailure(f"{where}: expected a JSON array of {what} rows")
    for index, raw in enumerate(value):
        at = f"{where} row {index}"
        yield at, _check_row(raw, at, known, required)


def benchmark_rows(value: Any, where: str) -> list[BenchmarkRow]:
    """The rows of a benchmarks or history response, checked field by field."""
    rows = []
    for at, row in _checked_rows(value, where, "benchmark", BENCHMARK_KEYS, BENCHMARK_REQUIRED):
        unknown = sorted(set(row["metrics"]) - KNOWN_FIGURES)
        if unknown:
            raise ImportFailure(f"{at}: unknown figure(s) metrics.{', metrics.'.join(unknown)}")
        if not row.get("run_url"):
            # Only a row with its CI run link and date is a measurement (dashboards' own
            # test rows have neither).
            raise ImportFailure(f"{at}: no run_url: not a published measurement")
        group = {k: row[k] for k in (*IDENTITY, "isl", "osl", "date", "run_url")}
        core = {k: row["metrics"].get(k) for k in CORE_FIGURES}
        key = _digest({**group, "conc": row["conc"], "figures": core})
        rows.append(BenchmarkRow(key=key, group=_digest(group), row=row))
    return rows


def merged(*responses: list[BenchmarkRow]) -> list[BenchmarkRow]:
    """Every row once: where two responses hold the same row, the one stating more figures
    (the latest response keeps the p90/p99.9 and power figures history leaves out)."""
    chosen: dict[str, BenchmarkRow] = {}
    for rows in responses:
        for row in rows:
            held = chosen.get(row.key)
            if held is None or row.stated_figures > held.stated_figures:
                chosen[row.key] = row
    return list(chosen.values())


# --- documents ---------------------------------------------------------------------------


def model_of(key: str) -> tuple[str, str | None]:
    """(name, family) for an InferenceX model key."""
    if key in MODEL_NAMES:
        return MODEL_NAMES[key], None
    return key, MODEL_FAMILIES.get(key)


def deployment_of(row: dict[str, Any]) -> dict[str, Any]:
    """The deployment the row states. Both pools for a disaggregated one; one otherwise."""

    def pool(side: str, *, workers: bool = False) -> dict[str, Any]:
        shape = {
            "tp": row[f"{side}_tp"],
            "ep": row[f"{side}_ep"],
            "dp_attention": row[f"{side}_dp_attention"],
        }
        if workers:
            # InferenceX writes 0 where it does not know how many engine instances served
            # a pool (no pool has none): not stated.
            shape["workers"] = row[f"{side}_num_workers"] or None
        return drop_none(shape)

    deployment: dict[str, Any] = {
        "accelerator": accelerator_sku(str(row["hardware"]).upper()),
        # One name per engine (engines.py): InferenceX's `trt` is trtllm, its name kept as
        # written in environment.extra.engine_as_written (_as_written).
        "engine": {"name": engine_name(str(row["framework"]))},
        "quantization": {"weights": str(row["precision"]).upper()},
        "multinode": bool(row["is_multinode"]),
        # "none" states that no speculative decoding was used.
        "speculative": None
        if row["spec_method"] in (None, "none")
        else {"method": str(row["spec_method"])},
    }
    if row["disagg"]:
        prefill, decode = int(row["num_prefill_gpu"]), int(row["num_decode_gpu"])
        deployment["gpus"] = prefill + decode
        deployment["disaggregation"] = {
            "prefill_gpus": prefill,
            "decode_gpus": decode,
            "prefill": pool("prefill", workers=True),
            "decode": pool("decode", workers=True),
        }
    else:
        deployment["gpus"] = int(row["decode_tp"])
        deployment["parallelism"] = pool("decode")
    recipe, _ = recipe_of(row)
    if recipe is not None:
        deployment["engine_flags"] = list(recipe["flags"])
        deployment.update(recipe_facts(recipe, deployment))
    return deployment


# Frameworks InferenceX runs on one engine instance; its disaggregated runtimes have names of
# their own (dynamo-sglang, mori-sglang, vllm-disagg ...), and none of its benchmark rows of
# these frameworks is disaggregated.
AGGREGATED_FRAMEWORKS = frozenset({"sglang", "vllm", "trt", "atom"})


def evaluated_configuration(row: dict[str, Any]) -> dict[str, Any]:
    """The configuration an evaluation row was run on, as its benchmark rows state it.

    InferenceX's evaluation records of an aggregated framework say `disagg: true` with one
    prefill and one decode "worker" of the same shape on the same GPUs (every DeepSeek-R1 record
    of the shipped snapshot, 174 of sglang's 176): the two pools of one engine. Read as they
    are, the score would sit on a disaggregated deployment nobody benchmarked, and no throughput
    run of its configuration could show it. Such a record is read as the aggregated
    configuration of that TP; any other shape is kept as written."""
    pools_alike = all(
        row[f"prefill_{part}"] == row[f"decode_{part}"] for part in ("tp", "ep", "dp_attention")
    )
    if (
        row["disagg"]
        and row["framework"] in AGGREGATED_FRAMEWORKS
        and not row["is_multinode"]
        and pools_alike
        and row["num_prefill_gpu"] == row["num_decode_gpu"]
        and (row["prefill_num_workers"], row["decode_num_workers"]) in ((0, 0), (1, 1))
    ):
        return {**row, "disagg": False}
    return row


def _point(
    row: dict[str, Any], deployment: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the point, the figures kept as written for it)."""
    metrics = row["metrics"]
    over = denominators(deployment)
    latency: dict[str, dict[str, float]] = {}
    for metric in LATENCY_METRICS:
        for stat in STATISTICS:
            value = metrics.get(f"{stat}_{metric}")
            if value is not None:
                latency.setdefault(metric, {})[STAT_SLOTS[stat]] = value * 1000
    point: dict[str, Any] = {
        "concurrency": row["conc"],
        "throughput": {
            ours: metrics[theirs] * over[theirs]
            for theirs, ours in THROUGHPUTS.items()
            if theirs in metrics
        },
        "latency_ms": latency,
    }
    if "median_intvty" in metrics:
        point["interactivity_tok_s_user"] = {"p50": metrics["median_intvty"]}
    kept = {k: v for k, v in metrics.items() if k in KEPT_AS_WRITTEN}
    # The source's per-pool rates as written, and the pool each is over: diagnostics, never
    # read as per-GPU figures of the deployment (those are derived over all its GPUs).
    kept["per_gpu"] = {k: metrics[k] for k in THROUGHPUTS if k in metrics}
    kept["per_gpu_over"] = {k: w for k, w in pool_words(deployment).items() if k in metrics}
    return point, kept


def _midnight(date: str) -> str:
    return datetime.strptime(date, "%Y-%m-%d").replace(tzinfo=UTC).isoformat()


def _citation(source: Source, run_url: str) -> str:
    return f"InferenceX (SemiAnalysis), CI run {run_url}; read from {source.description}"


def document_rows(
    rows: list[BenchmarkRow], *, source: Source, known: frozenset[str] = frozenset()
) -> list[ResultDocument]:
    """One document per run (configuration, lengths, date, CI run) of the rows not `known`,
    oldest first, so runs are stored in the order they were measured."""
    groups: dict[str, list[BenchmarkRow]] = {}
    for row in rows:
        if row.key not in known:
            groups.setdefault(row.group, []).append(row)
    documents = [_run_document(members, source) for members in groups.values()]
    return sorted(documents, key=lambda d: (d.environment.started_at, d.idempotency_key))


def _run_document(members: list[BenchmarkRow], source: Source) -> ResultDocument:
    members = sorted(members, key=lambda m: m.row["conc"])
    first = members[0].row
    where = f"{source.description} ({first['hardware']} {first['framework']} {first['date']})"
    deployment = deployment_of(first)
    name, family = model_of(str(first["model"]))
    points, kept = [], {}
    for member in members:
        point, figures = _point(member.row, deployment)
        points.append(point)
        kept[str(member.row["conc"])] = figures
    sequence = (int(first["isl"]), int(first["osl"]))
    scenario: dict[str, Any] = {"input_tokens": sequence[0], "output_tokens": sequence[1]}
    if sequence in PRESETS:
        scenario["preset"] = PRESETS[sequence]
    images = sorted({m.row["image"] for m in members if m.row.get("image")})
    extra = {
        "inferencex": {
            "rows": [m.key for m in members],
            "date": first["date"],
            "run_url": first["run_url"],
            "model_key": first["model"],
            "num_gpus_as_written": {
                "prefill": first["num_prefill_gpu"],
                "decode": first["num_decode_gpu"],
            },
            "image": images[0] if len(images) == 1 else images or None,
            "workers": [m.row["workers"] for m in members if m.row.get("workers")] or None,
            "recipe": recipe_extra(first),
            "figures_as_written": kept,
        },
        **_as_written(first),
    }
    document = {
        "schema": "inferboard.run/v1",
        "idempotency_key": "inferencex:" + _digest(sorted(m.key for m in members), 40),
        "provenance": "imported",
        "source": _source(source, first["run_url"]),
        "model": {"name": name, **({"family": family} if family else {})},
        "deployment": deployment,
        "scenario": scenario,
        "environment": {"started_at": _midnight(first["date"]), "extra": extra},
        "points": points,
    }
    return _validated(document, where)


def _as_written(row: dict[str, Any]) -> dict[str, str]:
    """The row's framework as InferenceX writes it, where it is not the engine's one name."""
    written = engine_as_written(str(row["framework"]))
    return {"engine_as_written": written} if written else {}


def _source(source: Source, run_url: str) -> dict[str, Any]:
    out: dict[str, Any] = {"tool": TOOL, "citation": _citation(source, run_url), "url": run_url}
    if source.file_sha256:
        out["file_sha256"] = source.file_sha256
    if source.file_name:
        out["file_name"] = source.file_name
    return out


def _validated(document: dict[str, Any], where: str) -> ResultDocument:
    try:
        return parse_document(document)
    except DocumentError as exc:
        raise ImportFailure(f"{where}: the imported run does not validate: {exc}") from None


def evaluation_documents(
    value: Any, *, source: Source, where: str, known: frozenset[str] = frozenset()
) -> list[ResultDocument]:
    """One accuracy document per evaluation row (a row is one deployment's GSM8K score)."""
    documents = []
    for at, row in _checked_rows(value, where, "evaluation", EVALUATION_KEYS, EVALUATION_REQUIRED):
        metrics = row["metrics"]
        key = "inferencex-eval:" + _digest({k: v for k, v in row.items() if k != "id"}, 40)
        if key in known:
            continue
        n = metrics.get("n_eff")
        if not isinstance(n, int) or n < 1:
            raise ImportFailure(f"{at}: metrics.n_eff should be a whole number of items")
        accuracy = [
            {
                "protocol": f"inferencex-{row['task']}",
                "task": str(row["task"]),
                "metric": metric,
                "n": n,
                "score": metrics[metric],
                **({"stderr": metrics[f"{metric}_se"]} if f"{metric}_se" in metrics else {}),
            }
            for metric in EVAL_METRICS
            if metric in metrics
        ]
        if not accuracy:
            raise ImportFailure(f"{at}: neither metrics.em_strict nor metrics.em_flexible")
        name, family = model_of(str(row["model"]))
        when = row.get("timestamp") or _midnight(row["date"])
        configuration = evaluated_configuration(row)
        extra = {
            "inferencex": {
                "date": row["date"],
                "run_url": row["run_url"],
                "model_key": row["model"],
                "conc": row.get("conc"),
                "id": row.get("id"),
                "config_id": row.get("config_id"),
                "recipe": recipe_extra(configuration),
                "disagg_as_written": row["disagg"] if configuration is not row else None,
                "figures_as_written": {
                    k: v for k, v in metrics.items() if k not in ("n_eff", *EVAL_METRICS)
                },
            },
            **_as_written(row),
        }
        document = {
            "schema": "inferboard.run/v1",
            "idempotency_key": key,
            "provenance": "imported",
            "source": _source(source, row["run_url"]),
            "model": {"name": name, **({"family": family} if family else {})},
            "deployment": deployment_of(configuration),
            "environment": {"started_at": when, "extra": extra},
            "accuracy": accuracy,
        }
        documents.append(_validated(document, at))
    return documents


# --- the formats, for a single file ------------------------------------------------------


def _file_source(job: ImportInput) -> Source:
    return Source(
        description=f"file {job.main.name}",
        file_name=job.main.name,
        file_sha256=job.main.sha256,
    )


def parse_benchmarks(job: ImportInput) -> list[ResultDocument]:
    if job.facts.as_tree():
        raise ImportFailure(
            f"{job.main.name}: InferenceX API rows state their own facts; give no facts"
        )
    rows = benchmark_rows(load_json(job.main), job.main.name)
    return document_rows(rows, source=_file_source(job))


def parse_evaluations(job: ImportInput) -> list[ResultDocument]:
    if job.facts.as_tree():
        raise ImportFailure(
            f"{job.main.name}: InferenceX API rows state their own facts; give no facts"
        )
    value = load_json(job.main)
    return evaluation_documents(value, source=_file_source(job), where=job.main.name)


def _sniff_benchmarks(seen: Preview) -> bool:
    row = seen.first_item
    return isinstance(row, dict) and "hardware" in row and "isl" in row and "metrics" in row


def _sniff_evaluations(seen: Preview) -> bool:
    row = seen.first_item
    return isinstance(row, dict) and "hardware" in row and "task" in row and "metrics" in row


register(
    Format(
        name="inferencex-api-benchmarks",
        tool=f"{TOOL} /api/v1/benchmarks and /api/v1/benchmarks/history",
        summary="InferenceX API benchmark rows (latest or history), one run per CI sweep",
        sniff=_sniff_benchmarks,
        parse=parse_benchmarks,
    )
)
register(
    Format(
        name="inferencex-api-evaluations",
        tool=f"{TOOL} /api/v1/evaluations",
        summary="InferenceX API evaluation rows (GSM8K), one accuracy run per row",
        sniff=_sniff_evaluations,
        parse=parse_evaluations,
    )
)
