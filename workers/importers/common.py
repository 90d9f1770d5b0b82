"""Shared plumbing for importers: strict parsing, units, fact merging, document assembly."""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn, overload

import yaml

from workers.figures import RunStatus, run_status
from workers.importers.accelerators import accelerator_sku
from workers.importers.engines import engine_as_written, engine_name
from workers.importers.errors import ImportFailure
from workers.importers.facts import Facts
from workers.results import (
    SCHEMA_ID,
    DocumentError,
    ResultDocument,
    parse_document,
)


@dataclass(frozen=True)
class PeerFile:
    data: bytes
    name: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


@dataclass(frozen=True)
class ImportInput:
    """One peer file, optional companion files (per-request records, samples), the facts."""

    main: PeerFile
    facts: Facts = field(default_factory=Facts)
    companions: tuple[PeerFile, ...] = ()

    namespace: str = ""  # whose runs these are (e.g. 'org-12'); '' for runs of no organization

    def idempotency_key(self, index: int | None = None) -> str:
        """'sha256:<file hash>[:<index>][:<namespace>]'.

        Re-importing the same bytes gives the same key, so the server stores the run once.
        A file that yields many documents gives each its own key (suffix ':<index>').
        Companion per-request files do not change the key: the same measurement with or
        without its records is one run, to which the records can be added later. The
        namespace keeps one organization's import from blocking another's.
        """
        key = f"sha256:{self.main.sha256}"
        if index is not None:
            key = f"{key}:{index}"
        return f"{key}:{self.namespace}" if self.namespace else key


# --- parsing -----------------------------------------------------------------------------


def decode_text(peer: PeerFile) -> str:
    try:
        return peer.data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ImportFailure(f"{peer.name}: not UTF-8 text (byte {exc.start})") from None


def _reject_constant(name: str) -> float:
    raise ValueError(f"non-standard JSON constant {name}")


def load_json(peer: PeerFile, *, allow_nonfinite: bool = False) -> Any:
    """Strict JSON; NaN/Infinity only where the tool is known to write them."""
    text = decode_text(peer)
    if not text.strip():
        raise ImportFailure(f"{peer.name}: the file is empty")
    try:
        return _loads(text, peer.name, allow_nonfinite=allow_nonfinite)
    except ImportFailure:
        written = yaml_report(text)
        if written:
            raise ImportFailure(f"{peer.name}: {written}") from None
        raise


YAML_PREFIX = "this is a YAML file, not JSON"
# Only the failure path parses YAML, and only text that opens like a YAML mapping or list
# ('key:' or '- '): a large CSV or log would otherwise be scanned whole as one scalar. Even
# libyaml builds ~100 kB/s of mappings on a busy host, so a larger file keeps the JSON error.
YAML_LIMIT = 256 * 1024
YAML_START = re.compile(r"^(---\s*$|- |[A-Za-z_][\w.-]*:(\s|$))")
YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when installed


def yaml_report(text: str) -> str | None:
    """What a YAML report is, when text that is not JSON parses as a YAML mapping or list.

    Tools that write YAML beside JSON (guidellm picks the format from --output-path's
    extension) write the same report in both; the useful answer is which tool wrote it and
    how to get the JSON, not the JSON error at line 1.
    """
    opening = next(
        (line for line in text.splitlines() if line.strip() and not line.startswith("#")), ""
    )
    if len(text) > YAML_LIMIT or not YAML_START.match(opening):
        return None
    try:
        value = yaml.load(text, Loader=YAML_LOADER)  # noqa: S506 - a safe loader
    except (yaml.YAMLError, RecursionError):
        return None
    if isinstance(value, list):
        return f"{YAML_PREFIX} (a YAML list of {len(value)} item(s)); give the tool's JSON output"
    if not isinstance(value, dict):
        return None
    metadata = object_at(value, "metadata")
    benchmarks = value.get("benchmarks") if isinstance(value.get("benchmarks"), list) else []
    first = benchmarks[0] if benchmarks and isinstance(benchmarks[0], dict) else {}
    if benchmarks and (
        metadata.get("guidellm_version")
        or "args" in value
        or first.get("type_") == "generative_benchmark"
    ):
        version = metadata.get("guidellm_version") or "of unstated version"
        older = (
            "; its layout is guidellm 0.2/0.3's (benchmarks[].args.strategy, run_stats), "
            "which we do not read either"
            if "config" not in first and ("run_stats" in first or "args" in first)
            else ""
        )
        return (
            f"{YAML_PREFIX}: a guidellm report written as YAML (guidellm {version}); we read "
            "guidellm's JSON report: run it again with --output-path ending in .json, or "
            f"convert this file to JSON{older}"
        )
    keys = ", ".join(sorted(str(k) for k in value)[:12])
    return f"{YAML_PREFIX} (a YAML mapping with keys {keys}); give the tool's JSON output"


def _loads(text: str, where: str, *, allow_nonfinite: bool) -> Any:
    constant = float if allow_nonfinite else _reject_constant
    try:
        return json.loads(text, parse_constant=constant)
    except json.JSONDecodeError as exc:
        # A string can hold no raw newline, so an unterminated one ran into the end of file.
        at_end = exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")
        hint = " (the file looks truncated)" if at_end else ""
        raise ImportFailure(
            f"{where}: not valid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}{hint}"
        ) from None
    except ValueError as exc:
        raise ImportFailure(f"{where}: {exc}") from None


def load_jsonl(peer: PeerFile, *, allow_nonfinite: bool = False) -> list[Any]:
    text = decode_text(peer)
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            rows.append(_loads(line, f"{peer.name} line {number}", allow_nonfinite=allow_nonfinite))
    if not rows:
        raise ImportFailure(f"{peer.name}: the file has no JSON lines")
    return rows


def drop_none(tree: Mapping[str, Any]) -> dict[str, Any]:
    """The entries that say something: a None from a peer file means the field is absent."""
    return {k: v for k, v in tree.items() if v is not None}


def expect_object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ImportFailure(f"{where}: expected a JSON object, got {type(value).__name__}")
    return value


def object_at(row: Mapping[str, Any], key: str) -> dict[str, Any]:
    """The JSON object at `key`, or {} when the file has none there (or something else)."""
    value = row.get(key)
    return value if isinstance(value, dict) else {}


def check_keys(
    row: Mapping[str, Any], known: Iterable[str], where: str, required: Iterable[str] = ()
) -> None:
    """Unknown keys are errors: a field we do not understand may carry a measurement."""
    known_set = set(known)
    unknown = sorted(k for k in row if k not in known_set)
    if unknown:
        raise ImportFailure(f"{where}: unknown field(s) {', '.join(unknown)}")
    missing = [k for k in required if k not in row]
    if missing:
        raise ImportFailure(f"{where}: missing field(s) {', '.join(missing)}")


def require_keys(row: Mapping[str, Any], required: Iterable[str], where: str) -> None:
    missing = [k for k in required if k not in row]
    if missing:
        raise ImportFailure(f"{where}: missing field(s) {', '.join(missing)}")


def number(row: Mapping[str, Any], key: str, where: str) -> float | None:
    """A finite number or None; anything else is an error naming the field."""
    value = row.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ImportFailure(f"{where}: field {key} should be a number, got {value!r}")
    if not math.isfinite(value):
        raise ImportFailure(f"{where}: field {key} is {value}, not a finite number")
    return value


def integer(row: Mapping[str, Any], key: str, where: str) -> int | None:
    value = number(row, key, where)
    if value is None:
        return None
    if value != int(value):
        raise ImportFailure(f"{where}: field {key} should be a whole number, got {value!r}")
    return int(value)


# --- units -------------------------------------------------------------------------------

# Multipliers into milliseconds. Units are read from the format (a documented unit or a unit
# field in the file), never guessed from magnitudes.
TIME_TO_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1000.0, "sec": 1000.0}


def stat_fields(row: Mapping[str, Any], pattern: re.Pattern[str]) -> Iterator[tuple[str, str, str]]:
    """(key, statistic, metric) for each key of `row` that names a statistic, read from
    `pattern`'s two groups ('p99_ttft_ms' -> 'p99', 'ttft'); other keys are passed over."""
    for key in row:
        match = pattern.match(key)
        if match:
            stat, metric = match.groups()
            yield key, stat, metric


@overload
def to_ms(value: float, unit: str) -> float: ...
@overload
def to_ms(value: None, unit: str) -> None: ...
def to_ms(value: float | None, unit: str) -> float | None:
    if value is None:
        return None
    # Multiplying by 1.0 must leave the file's value bit-for-bit unchanged.
    factor = TIME_TO_MS[unit]
    return value if factor == 1.0 else value * factor


# --- load shape -------------------------------------------------------------------------

# Below this share of the requested rate, a run with a concurrency cap was paced by the cap.
RATE_BOUND = 0.9


def rate_bound(requested: float | None, concurrency: int | None, achieved: float | None) -> bool:
    """Whether a requested rate, not a concurrency cap, set the pace of a run.

    Tools accept both (`--max-concurrency 1 --request-rate 200`); a run that achieved well
    under the rate it asked for (1.37 of 200 req/s) was closed-loop at its concurrency, and
    is stored so, with the requested rate kept beside the achieved one.
    """
    if requested is None:
        return False
    if not concurrency or achieved is None:
        return True
    return achieved >= RATE_BOUND * requested


# --- one dataset vocabulary ---------------------------------------------------------------

# Tools name the same thing differently: random token prompts of set lengths are "random"
# to sglang and vLLM, "synthetic" to aiperf and guidellm. Documents use one name per kind so
# the same workload from two tools lands in one scenario.
DATASET_NAMES = {
    "random": "random",
    "random-ids": "random",
    "synthetic": "random",
    "sharegpt": "sharegpt",
}


def dataset_name(stated: str) -> str:
    """Our name for a tool's dataset name (unknown names are kept, lower-cased)."""
    key = stated.strip().lower()
    return DATASET_NAMES.get(key, key)


# --- document assembly -------------------------------------------------------------------

REQUIRED_DEPLOYMENT = (
    ("accelerator",),
    ("gpus",),
    ("engine", "name"),
    ("quantization", "weights"),
)


def merge_facts(stated: dict[str, Any], given: dict[str, Any], path: str) -> dict[str, Any]:
    """File facts + user facts; both stating a fact differently is an error naming it.

    A key present with None in `stated` means the file says 'none' (e.g. no speculative
    decoding), which a user fact may not contradict.
    """
    merged = dict(stated)
    for key, value in given.items():
        where = f"{path}.{key}" if path else key
        if key not in stated:
            merged[key] = value
        elif isinstance(value, dict) and isinstance(stated[key], dict):
            merged[key] = merge_facts(stated[key], value, where)
        elif not _same(stated[key], value):
            raise ImportFailure(
                f"{where}: the file says {stated[key]!r}, the facts say {value!r}; "
                "drop the fact or import a different file"
            )
    return merged


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return a.strip().lower() == b.strip().lower()
    return a == b


# The flag that gives each fact a refusal can name, so one message says how to give them all.
FACT_FLAGS = {
    "model.name": "--model NAME",
    "deployment.accelerator": "--accelerator SKU",
    "deployment.gpus": "--gpus N",
    "deployment.engine.name": "--engine NAME",
    "deployment.quantization.weights": "--weights DTYPE",
    "deployment.speculative.method": "--spec-method METHOD",
    "deployment.disaggregation.prefill_gpus": "--prefill-gpus N",
    "deployment.disaggregation.decode_gpus": "--decode-gpus N",
    "scenario.input_tokens": "--input-tokens N",
    "scenario.output_tokens": "--output-tokens N",
}


class MissingFacts(ImportFailure):
    """Every fact a document requires that neither the file nor the user states, all at once."""

    def __init__(self, missing: list[str], where: str | None = None) -> None:
        self.missing = list(missing)
        flags = " ".join(FACT_FLAGS[name] for name in self.missing)
        names = ", ".join(
            f"{name} (the file does not name the model)" if name == "model.name" else name
            for name in self.missing
        )
        prefix = f"{where}: " if where else ""
        super().__init__(
            f"{prefix}the file does not state these facts and none were given: {names}; "
            f"give {flags} (or the same facts in --deployment YAML)"
        )


def resolve_deployment(stated: dict[str, Any], facts: Facts) -> dict[str, Any]:
    """The merged deployment, or an error naming every required fact still missing."""
    deployment, missing = _deployment_and_missing(stated, facts)
    if missing:
        raise MissingFacts(missing)
    return deployment


def _deployment_and_missing(
    stated: dict[str, Any], facts: Facts
) -> tuple[dict[str, Any], list[str]]:
    given = facts.as_tree().get("deployment", {})
    # One SKU per accelerator and one name per engine, from the file and the facts alike,
    # before they are compared: `trt-llm` given for a file's `trtllm` is the same engine.
    deployment = merge_facts(_one_name(stated), _one_name(given), "deployment")
    if deployment.get("gpus") == "tp":
        tp = (deployment.get("parallelism") or {}).get("tp")
        if tp is None:
            raise ImportFailure("deployment.gpus is 'tp' but no TP is stated for this deployment")
        deployment["gpus"] = tp
    missing = _pool_gpus_missing(deployment)
    disaggregated = isinstance(deployment.get("disaggregation"), dict)
    for path in REQUIRED_DEPLOYMENT:
        if disaggregated and path == ("gpus",):
            continue  # the pools' GPUs are asked instead, and give the total
        node: Any = deployment
        for part in path:
            node = node.get(part) if isinstance(node, dict) else None
        if node is None:
            missing.append("deployment." + ".".join(path))
    speculative = deployment.get("speculative")
    if isinstance(speculative, dict) and not speculative.get("method"):
        # The file shows speculative decoding ran (acceptance counts) without naming it.
        missing.append("deployment.speculative.method")
    return deployment, missing


def _pool_gpus_missing(deployment: dict[str, Any]) -> list[str]:
    """A disaggregated deployment's GPUs are its pools': the pools' GPUs still missing, or
    none, with the total (deployment.gpus) set from them."""
    pools = deployment.get("disaggregation")
    if not isinstance(pools, dict):
        return []
    missing = [
        f"deployment.disaggregation.{name}"
        for name in ("prefill_gpus", "decode_gpus")
        if pools.get(name) is None
    ]
    if missing:
        return missing
    total = pools["prefill_gpus"] + pools["decode_gpus"]
    if deployment.get("gpus") not in (None, total):
        raise ImportFailure(
            f"deployment.gpus is {deployment['gpus']}, but the prefill and decode pools have "
            f"{pools['prefill_gpus']} + {pools['decode_gpus']} = {total} GPUs"
        )
    deployment["gpus"] = total
    return []


def _one_name(tree: dict[str, Any]) -> dict[str, Any]:
    """The deployment with its accelerator's SKU and its engine's one name."""
    named = dict(tree)
    if isinstance(tree.get("accelerator"), str):
        named["accelerator"] = accelerator_sku(tree["accelerator"])
    engine = tree.get("engine")
    if isinstance(engine, dict) and isinstance(engine.get("name"), str):
        named["engine"] = {**engine, "name": engine_name(engine["name"])}
    return named


def _as_written(stated: dict[str, Any], facts: Facts, stored: dict[str, Any]) -> dict[str, str]:
    """The accelerator and engine names the file (else the facts) wrote, where they are not
    the names stored: environment.extra's accelerator_as_written / engine_as_written."""
    written: dict[str, str] = {}
    for name in (stated.get("accelerator"), facts.deployment.accelerator):
        if isinstance(name, str) and name.strip() != stored["accelerator"]:
            written["accelerator_as_written"] = name
            break
    # The file's spelling when it names the engine, else the facts'.
    engine = (stated.get("engine") or {}).get("name") or facts.deployment.engine.name
    if isinstance(engine, str) and engine_as_written(engine):
        written["engine_as_written"] = engine
    return written


def resolve_scenario(stated: dict[str, Any], facts: Facts) -> dict[str, Any]:
    scenario, missing = _scenario_and_missing(stated, facts)
    if missing:
        raise MissingFacts(missing)
    return scenario


def _scenario_and_missing(stated: dict[str, Any], facts: Facts) -> tuple[dict[str, Any], list[str]]:
    given = facts.as_tree().get("scenario", {})
    scenario = merge_facts(stated, given, "scenario")
    # The schema would default to "random"; a file that does not say must not claim it.
    scenario.setdefault("dataset", "unstated")
    missing = [f"scenario.{k}" for k in ("input_tokens", "output_tokens") if k not in scenario]
    return scenario, missing


def resolve_model(
    stated: str | None, facts: Facts, where: str
) -> tuple[dict[str, Any], str | None]:
    """Model info and, when the user renamed it, the name the file used (kept for audit)."""
    model, renamed = _model_and_renamed(stated, facts)
    if model is None:
        raise ImportFailure(f"{where}: the file does not name the model; give --model NAME")
    return model, renamed


def _model_and_renamed(
    stated: str | None, facts: Facts
) -> tuple[dict[str, Any] | None, str | None]:
    name = facts.model or stated
    if not name:
        return None, None
    model: dict[str, Any] = {"name": name}
    if facts.model_family:
        model["family"] = facts.model_family
    renamed = stated if (facts.model and stated and stated != facts.model) else None
    return model, renamed


def _named(where: str, resolve: Any, *args: Any) -> Any:
    """Facts problems name the file (and record) they are about."""
    try:
        return resolve(*args)
    except ImportFailure as exc:
        raise ImportFailure(f"{where}: {exc}") from None


def build_document(
    job: ImportInput,
    *,
    tool: str,
    model_stated: str | None,
    deployment_stated: dict[str, Any],
    scenario_stated: dict[str, Any] | None = None,
    points: list[dict[str, Any]] | None = None,
    accuracy: list[dict[str, Any]] | None = None,
    environment: dict[str, Any] | None = None,
    status: RunStatus | None = None,
    stopped_early: str | None = None,
    index: int | None = None,
    where: str | None = None,
) -> ResultDocument:
    """The imported run's document. Its status, unless given, is what its points' request
    counts say (workers.figures.run_status, the one rule for every importer); a file that
    says its run was cancelled or stopped early gives the reason in its words
    (`stopped_early`), and the run is partial."""
    where = where or job.main.name
    # Model, deployment and scenario are resolved before any is refused, so one refusal names
    # every missing fact and the user's retry is the last.
    model, renamed = _model_and_renamed(model_stated, job.facts)
    deployment, missing = _named(where, _deployment_and_missing, deployment_stated, job.facts)
    if model is None:
        missing.insert(0, "model.name")
    scenario: dict[str, Any] | None = None
    if points:
        scenario, scenario_missing = _named(
            where, _scenario_and_missing, scenario_stated or {}, job.facts
        )
        missing += scenario_missing
    if missing:
        raise MissingFacts(missing, where)
    assert model is not None
    environment = dict(environment or {})
    if renamed:
        environment.setdefault("extra", {})["model_in_file"] = renamed
    written = _as_written(deployment_stated, job.facts, deployment)
    if written:
        environment.setdefault("extra", {}).update(written)
    document: dict[str, Any] = {
        "schema": SCHEMA_ID,
        "idempotency_key": job.idempotency_key(index),
        "provenance": "imported",
        "status": status
        or run_status((p.get("requests") for p in points or []), stopped_early=bool(stopped_early)),
        "stopped_early": stopped_early,
        "source": {"tool": tool, "file_sha256": job.main.sha256, "file_name": job.main.name},
        "model": model,
        "deployment": deployment,
        "environment": environment,
        "points": points or [],
        "accuracy": accuracy or [],
    }
    if scenario is not None:
        document["scenario"] = scenario
    try:
        return parse_document(document)
    except DocumentError as exc:
        raise ImportFailure(f"{where}: the imported run does not validate: {exc}") from None


def companion_alone(job: ImportInput, what: str, main: str) -> NoReturn:
    """The refusal of a file that only goes with another (per-request records, samples),
    imported alone: it sends the user back to import `main` with this file as --records."""
    raise ImportFailure(f"{job.main.name}: {what}; import {main} and give this file with --records")
