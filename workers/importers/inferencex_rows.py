"""What InferenceX's aggregate rows share, whichever shape: the deployment a row states, its
statistics split by metric, its per-GPU throughput and its concurrency.
"""

from __future__ import annotations

import re
from typing import Any

from workers.importers.accelerators import one_accelerator, runner_sku
from workers.importers.common import drop_none, integer, number, stat_fields, to_ms
from workers.importers.errors import ImportFailure
from workers.slo import STAT_SLOTS

# The InferenceX result name: precision, framework, parallelism, disagg, spec, concurrency.
RESULT_NAME = re.compile(
    r"_(?P<precision>[a-z0-9]+)_(?P<framework>[a-z0-9.-]+)"
    r"_tp(?P<tp>\d+)(?:-pp(?P<pp>\d+))?(?:-dcp\d+-pcp\d+)?-ep(?P<ep>\d+)"
    r"-dpa(?P<dpa>true|false)"
    r"_disagg-(?P<disagg>true|false)_spec-(?P<spec>[a-z0-9_]+?)_conc(?P<conc>\d+)_",
    re.IGNORECASE,
)
STAT_KEY = re.compile(r"^(mean|median|std|min|max|p\d+(?:\.\d+)?)_(.+)$")
# Their metric name -> ours; all in seconds in these files.
TIME_METRICS = {"ttft": "ttft", "tpot": "tpot", "itl": "itl", "e2el": "e2el", "ttlt": "e2el"}
# Statistics kept as written (not time, or not a distribution): name -> why it is extra.
EXTRA_STATS = {
    "intvty",
    "qps",
    "input_tokens",
    "output_tokens_actual",
    "output_tokens_expected",
}


def split_stats(
    row: dict[str, Any], where: str
) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, float]], set[str]]:
    """(latency_ms distributions, statistics kept as written, keys consumed).

    Percentiles without a slot (p75) stay with the kept statistics, named as in the file.
    """
    latency: dict[str, dict[str, float]] = {}
    kept: dict[str, dict[str, float]] = {}
    consumed: set[str] = set()
    for key, stat, metric in stat_fields(row, STAT_KEY):
        if metric not in TIME_METRICS and metric not in EXTRA_STATS:
            continue  # not a statistic of ours (e.g. 'total_tput_tps'); checked by the caller
        consumed.add(key)
        value = number(row, key, where)
        if value is None:
            continue
        slot = STAT_SLOTS.get(stat)
        if metric in TIME_METRICS and slot is not None:
            latency.setdefault(TIME_METRICS[metric], {})[slot] = to_ms(value, "s")
        else:
            kept.setdefault(metric, {})[stat] = value
    return latency, kept, consumed


# InferenceX's heterogeneous disaggregated rows (process_result.py since #2100) name each
# pool's hardware; a deployment here has one (accelerators.one_accelerator says why).
POOL_HARDWARE = ("prefill_hw", "decode_hw")


def check_known(row: dict[str, Any], known: set[str], consumed: set[str], where: str) -> None:
    if any(key in row for key in POOL_HARDWARE):
        # Before the unknown fields: a mixed pool is the reason, not the keys it comes with.
        pools = {key.removesuffix("_hw"): row.get(key) or "" for key in POOL_HARDWARE}
        one_accelerator(pools, where)
    unknown = sorted(k for k in row if k not in known and k not in consumed)
    if unknown:
        raise ImportFailure(f"{where}: unknown field(s) {', '.join(unknown)}")
    missing = [k for k in ("hw", "model", "framework", "precision", "tp") if k not in row]
    if missing:
        raise ImportFailure(f"{where}: missing field(s) {', '.join(missing)}")


def row_flag(value: Any, key: str, where: str) -> bool | None:
    """InferenceX writes booleans as JSON booleans or as the strings 'true'/'false'."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise ImportFailure(f"{where}: field {key} should be true or false, got {value!r}")


def row_sku(hw: str) -> str:
    """The accelerator SKU an InferenceX `hw` names ('b200-dgxc-slurm' is B200): the one rule
    of workers/importers/accelerators.py, so a runner's name is never stored whole."""
    return runner_sku(hw)


def row_engine(row: dict[str, Any]) -> dict[str, Any]:
    engine: dict[str, Any] = {"name": str(row["framework"])}
    image = row.get("image") or ""
    # The image tag is the engine release ('vllm/vllm-openai-rocm:v0.21.0' -> 0.21.0).
    tag = image.rsplit(":", 1)[1] if ":" in image else ""
    if re.fullmatch(r"v?\d+(\.\d+)+\S*", tag):
        engine["version"] = tag.removeprefix("v")
    return engine


def deployment_from_row(row: dict[str, Any], filename: str, where: str) -> dict[str, Any]:
    """Deployment facts the row states, checked against the result name in the file name."""
    if row_flag(row.get("disagg"), "disagg", where):
        raise ImportFailure(
            f"{where}: disaggregated aggregates (disagg: true) do not state the prefill and "
            "decode GPU pools; import the run's benchmark_serving.py files instead"
        )
    if row_flag(row.get("is_multinode"), "is_multinode", where):
        raise ImportFailure(f"{where}: multi-node aggregates (is_multinode: true) are not read")
    tp = integer(row, "tp", where)
    ep = integer(row, "ep", where)
    dpa = row_flag(row.get("dp_attention"), "dp_attention", where)
    spec = row.get("spec_decoding")
    named = RESULT_NAME.search(filename)
    if named:
        checks = {
            "precision": (
                str(row["precision"] or named["precision"]).lower(),
                named["precision"].lower(),
            ),
            "framework": (
                str(row["framework"] or named["framework"]).lower(),
                named["framework"].lower(),
            ),
            "tp": (tp, int(named["tp"])),
            "ep": (ep if ep is not None else int(named["ep"]), int(named["ep"])),
            "dp_attention": (
                dpa if dpa is not None else named["dpa"] == "true",
                named["dpa"].lower() == "true",
            ),
            "spec_decoding": (str(spec or named["spec"]).lower(), named["spec"].lower()),
        }
        for key, (in_file, in_name) in checks.items():
            if in_file != in_name:
                raise ImportFailure(
                    f"{where}: field {key} is {in_file!r} but the file name says {in_name!r}"
                )
        ep = ep if ep is not None else int(named["ep"])
        dpa = dpa if dpa is not None else named["dpa"].lower() == "true"
        spec = spec or named["spec"]
    precision = row["precision"] or (named["precision"] if named else "")
    framework = row["framework"] or (named["framework"] if named else "")
    parallelism = {"tp": tp, "ep": ep, "dp_attention": dpa}
    deployment: dict[str, Any] = {
        "accelerator": row_sku(str(row["hw"])),
        "gpus": tp,
        # An empty string states nothing: left out, so the missing fact is named.
        "engine": row_engine({**row, "framework": framework}) if framework else {},
        "quantization": {"weights": str(precision).upper()} if precision else {},
        "parallelism": drop_none(parallelism),
        # "none" is a statement (no speculative decoding), which a fact may not contradict.
        "speculative": None if spec in (None, "none") else {"method": str(spec)},
    }
    if spec is None:
        del deployment["speculative"]  # not stated either way
    return deployment


def per_gpu_throughput(row: dict[str, Any], gpus: int, where: str) -> dict[str, float]:
    """Totals from the per-GPU figures: InferenceX divides totals by TP, we multiply back."""
    out = {}
    for ours, theirs in (
        ("total_tok_s", "tput_per_gpu"),
        ("output_tok_s", "output_tput_per_gpu"),
        ("input_tok_s", "input_tput_per_gpu"),
    ):
        value = number(row, theirs, where)
        if value is not None:
            out[ours] = value * gpus
    return out


def row_concurrency(row: dict[str, Any], filename: str, where: str) -> int | None:
    conc = integer(row, "conc", where)
    users = integer(row, "users", where)
    if conc is not None and users is not None and conc != users:
        raise ImportFailure(f"{where}: conc ({conc}) and users ({users}) disagree")
    value = conc if conc is not None else users
    named = RESULT_NAME.search(filename)
    if named and value is not None and int(named["conc"]) != value:
        raise ImportFailure(
            f"{where}: concurrency is {value} but the file name says conc{named['conc']}"
        )
    return value
