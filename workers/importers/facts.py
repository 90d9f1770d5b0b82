"""What a peer file does not say, the user says: deployment (and scenario) facts.

Facts come from a small YAML file, CLI flags, or both (flags win over the YAML). They are
merged with what the file itself states; when both state a fact and disagree, that is an
error naming the fact, never a silent choice. Facts that neither states stay unknown, and
the ones a result document requires (accelerator, GPUs, engine, weight quantization) are
reported together as missing.

A facts YAML looks like::

    model: zai-org/GLM-5-FP8          # optional; overrides a served alias in the file
    deployment:
      accelerator: H200
      gpus: 8                         # or "tp": each deployment uses TP GPUs (many-row files)
      engine: {name: vllm, version: 0.15.1}
      quantization: {weights: FP8}
      parallelism: {tp: 8}
      speculative: {method: mtp, draft_tokens: 3}
      disaggregation: {prefill_gpus: 8, decode_gpus: 16}   # prefill/decode in separate pools
    scenario:
      input_tokens: 1024
      output_tokens: 128
"""

from __future__ import annotations

import argparse
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from workers.importers.errors import ImportFailure
from workers.result_fields import validation_problems


class _Facts(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EngineFacts(_Facts):
    name: str | None = None
    version: str | None = None
    image_digest: str | None = None


class QuantizationFacts(_Facts):
    weights: str | None = None
    activations: str | None = None
    kv_cache: str | None = None
    note: str | None = None


class ParallelismFacts(_Facts):
    tp: int | None = Field(None, ge=1)
    dp: int | None = Field(None, ge=1)
    ep: int | None = Field(None, ge=1)
    pp: int | None = Field(None, ge=1)
    dp_attention: bool | None = None


class SpeculativeFacts(_Facts):
    method: str
    draft_tokens: int | None = Field(None, ge=1)


class DisaggregationFacts(_Facts):
    """The GPUs of each pool of a disaggregated deployment (the file names the pools' roles
    and layouts; how many GPUs each pool had, a router's answer does not always say)."""

    prefill_gpus: int | None = Field(None, ge=1)
    decode_gpus: int | None = Field(None, ge=1)


class DeploymentFacts(_Facts):
    accelerator: str | None = None
    gpus: int | Literal["tp"] | None = None
    nodes: int | None = Field(None, ge=1)
    engine: EngineFacts = Field(default_factory=EngineFacts)
    quantization: QuantizationFacts = Field(default_factory=QuantizationFacts)
    parallelism: ParallelismFacts = Field(default_factory=ParallelismFacts)
    speculative: SpeculativeFacts | None = None
    disaggregation: DisaggregationFacts | None = None
    engine_flags: list[str] | None = None
    notes: str | None = None


class ScenarioFacts(_Facts):
    preset: str | None = None
    name: str | None = None
    input_tokens: int | None = Field(None, ge=1)
    output_tokens: int | None = Field(None, ge=1)
    length_spread: float | None = Field(None, ge=0, le=1)
    prefix_cache_hit_rate: float | None = Field(None, ge=0, le=1)
    dataset: str | None = None
    arrival: Literal["closed", "open"] | None = None
    warmup_requests: int | None = Field(None, ge=0)


class Facts(_Facts):
    model: str | None = None
    model_family: str | None = None
    deployment: DeploymentFacts = Field(default_factory=DeploymentFacts)
    scenario: ScenarioFacts = Field(default_factory=ScenarioFacts)

    def as_tree(self) -> dict[str, Any]:
        """Only the facts that were stated (None means 'not said')."""
        tree = self.model_dump(mode="json", exclude_none=True)
        return _drop_empty(tree)


def _drop_empty(tree: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            value = _drop_empty(value)
            if not value:
                continue
        out[key] = value
    return out


def _validate(data: Any, where: str) -> Facts:
    if data is None:
        return Facts()
    if not isinstance(data, dict):
        raise ImportFailure(f"{where}: expected a mapping of facts, got {type(data).__name__}")
    try:
        return Facts.model_validate(data)
    except ValidationError as exc:
        problems = validation_problems(exc)
        raise ImportFailure(f"{where}: {problems}") from None


def load_facts_yaml(text: str | bytes, where: str = "deployment facts") -> Facts:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ImportFailure(f"{where}: not valid YAML ({exc})") from None
    return _validate(data, where)


def add_fact_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags for facts, shared by the worker CLI and the Django management command."""
    group = parser.add_argument_group("deployment facts the file does not state")
    group.add_argument("--deployment", metavar="YAML", help="facts file (see docs)")
    group.add_argument("--model", dest="fact_model", metavar="NAME")
    group.add_argument("--accelerator", metavar="SKU", help="e.g. MI355X, B200, H200")
    group.add_argument("--gpus", metavar="N", help="an integer, or 'tp' for many-row files")
    group.add_argument("--nodes", type=int)
    group.add_argument("--engine", metavar="NAME", help="sglang, vllm, atom, trtllm, llama.cpp")
    group.add_argument("--engine-version", metavar="VERSION")
    group.add_argument("--weights", metavar="DTYPE", help="weight quantization: BF16, FP8 ...")
    group.add_argument("--kv-cache", metavar="DTYPE")
    group.add_argument("--tp", type=int)
    group.add_argument("--dp", type=int)
    group.add_argument("--ep", type=int)
    group.add_argument("--pp", type=int)
    group.add_argument("--dp-attention", action="store_true", default=None)
    group.add_argument("--spec-method", metavar="METHOD", help="mtp, eagle, ngram ...")
    group.add_argument("--spec-draft-tokens", type=int)
    group.add_argument("--prefill-gpus", type=int, help="GPUs of a disaggregated prefill pool")
    group.add_argument("--decode-gpus", type=int, help="GPUs of a disaggregated decode pool")
    group.add_argument("--input-tokens", type=int)
    group.add_argument("--output-tokens", type=int)


def facts_from_arguments(options: dict[str, Any], yaml_text: str | bytes | None = None) -> Facts:
    """YAML facts overlaid with flags (flags win). `options` is vars(argparse namespace)."""
    base = load_facts_yaml(yaml_text).model_dump(mode="json") if yaml_text else Facts().model_dump()
    gpus = options.get("gpus")
    if gpus is not None and gpus != "tp":
        try:
            gpus = int(gpus)
        except ValueError:
            raise ImportFailure(f"--gpus: expected an integer or 'tp', got {gpus!r}") from None
    flags: dict[str, Any] = {
        "model": options.get("fact_model"),
        "deployment": {
            "accelerator": options.get("accelerator"),
            "gpus": gpus,
            "nodes": options.get("nodes"),
            "engine": {"name": options.get("engine"), "version": options.get("engine_version")},
            "quantization": {
                "weights": options.get("weights"),
                "kv_cache": options.get("kv_cache"),
            },
            "parallelism": {
                key: options.get(key) for key in ("tp", "dp", "ep", "pp", "dp_attention")
            },
        },
        "scenario": {
            "input_tokens": options.get("input_tokens"),
            "output_tokens": options.get("output_tokens"),
        },
    }
    pools = {key: options.get(key) for key in ("prefill_gpus", "decode_gpus")}
    if any(value is not None for value in pools.values()):
        flags["deployment"]["disaggregation"] = pools
    if options.get("spec_method"):
        flags["deployment"]["speculative"] = {
            "method": options["spec_method"],
            "draft_tokens": options.get("spec_draft_tokens"),
        }
    return _validate(_overlay(base, flags), "flags")


def _overlay(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _overlay(merged[key], value)
        elif value is not None:
            merged[key] = value
    return merged
