"""The physical ceiling: the most tokens per second per GPU an accelerator's datasheet allows a
model, so a claim above it can be refused naming the bound (issue 53; not yet wired in).

Two limits, each an upper bound by construction (every simplification below makes it higher,
never lower), times a stated MARGIN:

- compute: every token the model computes (an uncached input token or an output token, a
  speculative draft's verified token included) costs at least 2 x active parameters FLOPs,
  and a GPU does at most its datasheet's peak dense FLOP/s at the run's compute precision
  (the narrower of weights and activations; a format the chip lacks runs at the next wider
  one). Attention and everything else the model does are left out.
- memory, for output tokens: one decode step reads at least the active weights once (at the
  format's own bits per parameter, block scales left out) from HBM and gives each sequence in
  the batch at most `tokens_per_step` tokens (1, or 1 + draft tokens with speculative
  decoding). The batch is at most the sequences in flight (a closed loop's concurrency) and
  at most what HBM holds beside the weights at the context length, each token's KV cache
  taken at 4 bits. Per GPU: batch x tokens_per_step x HBM bandwidth / active weight bytes.

The datasheets are the one accelerators file's (workers/accelerator_specs.py), the
architectures apps/projections/reference/models.json's: the one copy of each number. A worker
install that does not carry those files has no ceiling (`shipped_specs` returns empty tables).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

from workers import accelerator_specs

# A claim is refused only above bound x MARGIN: room for what the bound cannot know (a
# datasheet rounded down, embedding parameters that cost no FLOPs, a label one format off).
MARGIN = 1.25
# The narrowest KV cache in use (4-bit): the batch HBM can hold is never larger than this.
KV_BITS_FLOOR = 4
REFERENCE_DIR = Path(__file__).resolve().parents[1] / "apps" / "projections" / "reference"

Figure = Literal["output", "total"]


@dataclass(frozen=True)
class Chip:
    sku: str
    hbm_gb: float
    hbm_tb_s: float
    tflops: dict[str, float]  # dense, by "fp4", "fp8", "bf16"


@dataclass(frozen=True)
class Model:
    name: str
    params_total_b: float
    params_active_b: float
    layers: int
    kv_values_per_token_layer: int


@dataclass(frozen=True)
class Specs:
    chips: dict[str, Chip]  # by SKU, upper-cased
    models: dict[str, Model]  # by name and alias, lower-cased


@dataclass(frozen=True)
class Bound:
    """The ceiling on one figure, margin included, and the sentence that names it."""

    figure: Figure
    tok_s_per_gpu: float
    limit: Literal["compute", "memory"]
    sentence: str

    def refuses(self, claimed_tok_s_per_gpu: float) -> bool:
        return not claimed_tok_s_per_gpu <= self.tok_s_per_gpu  # a NaN is refused too


def _model(row: dict[str, Any]) -> Model:
    if row["kv_layout"] == "mla":
        kv = (row.get("kv_lora_rank") or 0) + (row.get("qk_rope_head_dim") or 0)
    else:
        kv = 2 * row["kv_heads"] * row["head_dim"]
    return Model(
        name=row["name"],
        params_total_b=row["params_total_b"],
        params_active_b=row["params_active_b"],
        layers=row["layers"],
        kv_values_per_token_layer=kv,
    )


def shipped_specs(directory: Path = REFERENCE_DIR) -> Specs:
    """The shipped datasheets and architectures; empty where the files are not installed."""
    return _specs(directory, accelerator_specs.accelerators_file())


@cache
def _specs(directory: Path, accelerators: Path) -> Specs:
    try:
        chips = accelerator_specs.reference_at(accelerators)["accelerators"]
        models = json.loads((directory / "models.json").read_text())["models"]
    except FileNotFoundError:
        return Specs(chips={}, models={})
    by_name: dict[str, Model] = {}
    for row in models:
        for name in [row["name"], *row.get("aliases", [])]:
            by_name[name.lower()] = _model(row)
    return Specs(
        chips={
            c["sku"].upper(): Chip(c["sku"], c["hbm_gb"], c["hbm_tb_s"], dict(c["tflops"]))
            for c in chips
        },
        models=by_name,
    )


def format_bits(label: str | None) -> int | None:
    """Bits per value of a quantization label by its name's rule ('NVFP4', 'MXFP4', 'INT4
    AWQ', 'W4A16' -> 4; 'FP8', 'e4m3' -> 8; 'BF16' -> 16); None when it says none."""
    text = (label or "").lower()
    for bits, pattern in (
        (4, r"fp4|int4|uint4|w4|q4|4[- ]?bit|nf4"),
        (6, r"fp6"),
        (8, r"fp8|int8|w8|q8|e4m3|e5m2|8[- ]?bit"),
        (16, r"bf16|fp16|f16|half|16[- ]?bit"),
        (32, r"fp32|f32|float32|32[- ]?bit"),
    ):
        if re.search(pattern, text):
            return bits
    return None


def compute_format(weights: str | None, activations: str | None = None) -> str:
    """The datasheet column a run computes at: the narrower of weights and activations
    (an unstated one is taken as narrow as the other, the most the chip could do)."""
    stated = [b for b in (format_bits(weights), format_bits(activations)) if b is not None]
    bits = max(stated) if len(stated) == 2 else min(stated, default=4)
    return "fp4" if bits <= 4 else "fp8" if bits <= 8 else "bf16"


def dense_tflops(chip: Chip, column: str) -> tuple[str, float]:
    """The chip's dense TFLOP/s at a format, or at the next wider one it has."""
    order = ["fp4", "fp8", "bf16"]
    for key in order[order.index(column) :]:
        if key in chip.tflops:
            return key, chip.tflops[key]
    raise ValueError(f"{chip.sku} states no dense FLOP/s at {column} or wider")


def _gb(value: float) -> str:
    return f"{value:,.1f} GB"


def compute_bound(chip: Chip, model: Model, *, figure: Figure, column: str) -> Bound:
    key, tflops = dense_tflops(chip, column)
    flops_per_token = 2 * model.params_active_b * 1e9
    bound = tflops * 1e12 / flops_per_token * MARGIN
    what = "output" if figure == "output" else "computed (uncached input + output)"
    return Bound(
        figure=figure,
        tok_s_per_gpu=bound,
        limit="compute",
        sentence=(
            f"{model.name} on {chip.sku} at {key.upper()}: at most {bound:,.0f} {what} tok/s "
            f"per GPU: {tflops:,.0f} TFLOP/s dense {key.upper()} (datasheet) against "
            f"2 × {model.params_active_b:g} B active parameters = "
            f"{flops_per_token / 1e9:,.0f} GFLOP per token, with a {MARGIN - 1:.0%} margin"
        ),
    )


def batch_held(
    chip: Chip, model: Model, *, gpus: int, weight_bits: int, context_tokens: int
) -> float | None:
    """The most sequences of `context_tokens` the deployment's HBM holds beside one copy of
    the weights (KV cache at KV_BITS_FLOOR); None when the weights alone do not fit (they
    are offloaded: HBM then bounds nothing here)."""
    free = gpus * chip.hbm_gb * 1e9 - model.params_total_b * 1e9 * weight_bits / 8
    values = context_tokens * model.layers * model.kv_values_per_token_layer
    per_sequence = values * KV_BITS_FLOOR / 8
    if free <= 0 or per_sequence <= 0:
        return None
    return free / per_sequence


def memory_bound(
    chip: Chip, model: Model, *, weight_bits: int, batch: float, tokens_per_step: float
) -> Bound:
    active_bytes = model.params_active_b * 1e9 * weight_bits / 8
    bound = batch * tokens_per_step * chip.hbm_tb_s * 1e12 / active_bytes * MARGIN
    steps = "" if tokens_per_step == 1 else f", {tokens_per_step:g} tokens per step"
    return Bound(
        figure="output",
        tok_s_per_gpu=bound,
        limit="memory",
        sentence=(
            f"{model.name} on {chip.sku} at {weight_bits}-bit weights: at most {bound:,.0f} "
            f"output tok/s per GPU: {chip.hbm_tb_s:g} TB/s of HBM (datasheet) reading "
            f"{_gb(active_bytes / 1e9)} of active weights per decode step, shared by at most "
            f"{batch:,.0f} sequences{steps}, with a {MARGIN - 1:.0%} margin"
        ),
    )


def ceiling(
    *,
    chip: Chip,
    model: Model,
    figure: Figure,
    weights: str | None,
    activations: str | None = None,
    gpus: int = 1,
    concurrency: int | None = None,
    context_tokens: int | None = None,
    tokens_per_step: float = 1.0,
) -> Bound:
    """The lower of the bounds that apply to `figure` (per GPU, margin included).

    `total` (tokens computed: uncached input plus output) has the compute bound; `output`
    also has the memory bound when the batch is bounded, by `concurrency` (sequences in
    flight, deployment-wide) and by what HBM holds at `context_tokens` (input + output)."""
    column = compute_format(weights, activations)
    bounds = [compute_bound(chip, model, figure=figure, column=column)]
    if figure == "output":
        weight_bits = format_bits(weights) or 4
        batches = [float(concurrency)] if concurrency else []
        if context_tokens:
            held = batch_held(
                chip, model, gpus=gpus, weight_bits=weight_bits, context_tokens=context_tokens
            )
            batches += [held] if held is not None else []
        if batches:
            batch = max(1.0, math.floor(min(batches)))
            bounds.append(
                memory_bound(
                    chip,
                    model,
                    weight_bits=weight_bits,
                    batch=batch,
                    tokens_per_step=tokens_per_step,
                )
            )
    return min(bounds, key=lambda b: b.tok_s_per_gpu)


def ceiling_for(
    *, accelerator: str, model: str, specs: Specs | None = None, **facts: Any
) -> Bound | None:
    """`ceiling` for an accelerator SKU and a model name (or alias, or 'org/name') as the
    shipped reference knows them; None for one it does not."""
    specs = specs or shipped_specs()
    chip = specs.chips.get(accelerator.strip().upper())
    name = model.strip().lower()
    found = specs.models.get(name) or specs.models.get(name.rsplit("/", 1)[-1])
    if chip is None or found is None:
        return None
    return ceiling(chip=chip, model=found, **facts)
