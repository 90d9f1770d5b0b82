"""Projections for hardware nobody here measured: the roofline's terms from datasheets.

Pure functions, no I/O (the reference data is read by apps/projections/reference.py).

Per decode step on one GPU of an instance of G GPUs serving B concurrent sequences:

- memory time  = (weight bytes read + KV-cache bytes read) / HBM bandwidth
- compute time = (2 x active parameters x B + attention FLOPs) / (G x dense FLOP/s)
- comm time    = tensor-parallel all-reduce and expert-parallel all-to-all bytes over the
  interconnect bandwidth, and the collectives' count (each has a latency no datasheet gives)
- prefill interference = the prefills of the B sequences spread over their output tokens

How these seconds become a TPOT, a TTFT and a throughput (efficiencies fitted on measured
accelerators, and what the fit misses carried from runs like the one asked) is
apps/projections/pointmodels.py's; throughput per GPU follows from the closed loop:
B x (ISL + OSL) / (TTFT + OSL x TPOT) / G.
"""

import math
from dataclasses import dataclass

import numpy as np

# Headroom the engines keep out of HBM (activations, graphs, fragmentation): the KV cache
# gets the rest. sglang's default mem_fraction_static is in this range.
HBM_USABLE_FRACTION = 0.88
# A concurrency, or an array of them: every term below is numpy-vectorised over the batch.
Batch = float | np.ndarray

# The fixed per-step cost enters the fit in milliseconds, and a collective's latency in
# tens of microseconds, so their columns are of the same order as the others (the least
# squares is then well conditioned).
STEP_OVERHEAD_UNIT_S = 1e-3
COLLECTIVE_LATENCY_UNIT_S = 1e-5


@dataclass(frozen=True)
class Architecture:
    name: str
    params_total_b: float
    params_active_b: float
    layers: int
    hidden_size: int
    attention_heads: int
    kv_heads: int
    head_dim: int
    kv_layout: str  # "mla" or "gqa"
    experts: int = 1
    active_experts: int = 1
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    sparse_attention_top_k: int | None = None
    dense_layers: int = 0  # leading layers with a dense MLP instead of experts (MoE only)

    @property
    def moe_layers(self) -> int:
        return self.layers - self.dense_layers if self.is_moe else 0

    @property
    def is_moe(self) -> bool:
        return self.experts > 1

    @property
    def routed_expert_params(self) -> float:
        """All routed experts' parameters: total - active = experts x (1 - k/E) x one expert."""
        if not self.is_moe:
            return 0.0
        share = self.active_experts / self.experts
        return (self.params_total_b - self.params_active_b) * 1e9 / (1 - share)

    @property
    def always_read_params(self) -> float:
        """Parameters every token uses: attention, dense layers, shared experts, embeddings."""
        return self.params_total_b * 1e9 - self.routed_expert_params

    @property
    def kv_values_per_token_layer(self) -> int:
        if self.kv_layout == "mla":
            return (self.kv_lora_rank or 0) + (self.qk_rope_head_dim or 0)
        return 2 * self.kv_heads * self.head_dim

    @property
    def attention_dims_per_head(self) -> int:
        """Multiply-adds per head per context token in decode: q.k plus p.v."""
        if self.kv_layout == "mla":  # absorbed MLA attends in the latent space
            return (self.kv_lora_rank or 0) * 2 + (self.qk_rope_head_dim or 0)
        return 2 * self.head_dim


@dataclass(frozen=True)
class Accelerator:
    sku: str
    family: str
    vendor: str
    hbm_gb: float
    hbm_tb_s: float
    tflops: dict[str, float]
    interconnect_gb_s: float

    def dense_flops(self, precision: str) -> float:
        """Dense FLOP/s at a precision; a format the chip lacks runs at the next wider one."""
        for key in (precision, "fp8", "bf16"):
            if key in self.tflops:
                return self.tflops[key] * 1e12
        raise ValueError(f"{self.sku} has no FLOP/s for {precision}")


@dataclass(frozen=True)
class Precision:
    compute: str  # key into Accelerator.tflops: "fp4", "fp8", "bf16"
    weight_bits: float
    kv_bits: float = 16

    @classmethod
    def named(cls, name: str) -> "Precision":
        """InferenceX's labels: fp4 = 4-bit blocks with an 8-bit scale per 32 (MXFP4) and a
        BF16 KV cache; fp8 = FP8 weights and activations, BF16 KV cache."""
        try:
            return PRECISIONS[name.lower()]
        except KeyError:
            raise ValueError(f"unknown precision {name!r}: one of {sorted(PRECISIONS)}") from None


PRECISIONS = {
    "fp4": Precision(compute="fp4", weight_bits=4.25),
    "mxfp4": Precision(compute="fp4", weight_bits=4.25),
    "nvfp4": Precision(compute="fp4", weight_bits=4.5),
    "fp8": Precision(compute="fp8", weight_bits=8),
    "bf16": Precision(compute="bf16", weight_bits=16),
}


@dataclass(frozen=True)
class Layout:
    gpus: int  # GPUs of one serving instance (tensor/expert parallel group)
    tp: int
    dp_attention: bool = False
    ep: int = 1  # expert parallelism: experts spread over ep GPUs, tokens sent to them


@dataclass(frozen=True)
class Shape:
    input_tokens: int
    output_tokens: int
    prefix_cache_hit_rate: float = 0.0

    @property
    def mean_context(self) -> float:
        return self.input_tokens + self.output_tokens / 2


# --- roofline terms (each hand-checkable; tests/apps/projections/test_model.py) ---


def experts_touched_fraction(arch: Architecture, batch: Batch) -> Batch:
    """Share of routed experts a step reads when `batch` tokens each pick k of E at random."""
    if not arch.is_moe:
        return 1.0
    return 1 - (1 - arch.active_experts / arch.experts) ** np.maximum(batch, 1)


def weight_bytes_per_gpu(
    arch: Architecture, precision: Precision, layout: Layout, batch: Batch
) -> Batch:
    """Weight bytes one GPU reads in one decode step."""
    shared_split = 1 if layout.dp_attention else layout.tp
    shared = arch.always_read_params / shared_split
    routed = arch.routed_expert_params * experts_touched_fraction(arch, batch) / layout.gpus
    return (shared + routed) * precision.weight_bits / 8


def kv_bytes_per_sequence(
    arch: Architecture, precision: Precision, context: float, *, stored: bool = False
) -> float:
    """KV-cache bytes one decode step reads for a sequence (sparse attention reads only its
    top k tokens), or, `stored`, the bytes the sequence keeps in HBM."""
    tokens = context if stored else min(context, arch.sparse_attention_top_k or context)
    return arch.kv_values_per_token_layer * arch.layers * tokens * precision.kv_bits / 8


def kv_split(arch: Architecture, layout: Layout) -> int:
    """GPUs one sequence's cache is spread over: MLA's single latent is replicated across
    tensor-parallel ranks unless attention is data-parallel; GQA splits by KV head."""
    if layout.dp_attention:
        return layout.gpus
    if arch.kv_layout == "mla":
        return 1
    return min(layout.tp, arch.kv_heads)


def kv_bytes_per_gpu(
    arch: Architecture, precision: Precision, layout: Layout, batch: Batch, context: float
) -> Batch:
    return batch * kv_bytes_per_sequence(arch, precision, context) / kv_split(arch, layout)


def decode_flops_per_gpu(arch: Architecture, layout: Layout, batch: Batch, context: float) -> Batch:
    attended = min(context, arch.sparse_attention_top_k or context)
    matmul = 2 * arch.params_active_b * 1e9 * batch
    attention = 2 * arch.layers * arch.attention_heads * arch.attention_dims_per_head * attended
    return (matmul + attention * batch) / layout.gpus


def prefill_flops_per_gpu(arch: Architecture, layout: Layout, shape: Shape) -> float:
    """FLOPs to prefill one request's uncached tokens, per GPU of the instance."""
    cached = shape.input_tokens * shape.prefix_cache_hit_rate
    new = shape.input_tokens - cached
    # each new token attends to the cache plus, on average, half the new tokens
    context = min(cached + new / 2, arch.sparse_attention_top_k or math.inf)
    matmul = 2 * arch.params_active_b * 1e9 * new
    attention = 2 * arch.layers * arch.attention_heads * arch.attention_dims_per_head * context
    return (matmul + attention * new) / layout.gpus


def allreduce_bytes_per_gpu(arch: Architecture, layout: Layout, batch: Batch) -> Batch:
    """Ring all-reduce traffic of two BF16 activations per layer (attention and MLP)."""
    if layout.gpus <= 1:
        return 0.0
    ring = 2 * (layout.gpus - 1) / layout.gpus
    return 2 * arch.layers * batch * arch.hidden_size * 2 * ring


def collectives_per_step(arch: Architecture, layout: Layout) -> tuple[int, int]:
    """(all-reduces, all-to-alls) one decode step waits on: tensor parallelism all-reduces
    after attention (unless attention is data-parallel) and after each MLP; with expert
    parallelism a MoE layer instead sends its tokens to their experts and back (two
    all-to-alls). Each costs a latency however small the batch."""
    if layout.gpus <= 1:
        return 0, 0
    attention = 0 if layout.dp_attention else arch.layers
    expert_parallel = layout.ep > 1 and arch.is_moe
    mlp = arch.layers - (arch.moe_layers if expert_parallel else 0)
    return attention + mlp, (2 * arch.moe_layers if expert_parallel else 0)


def collective_bytes_per_gpu(arch: Architecture, layout: Layout, batch: Batch) -> Batch:
    """Interconnect bytes one GPU moves in a decode step: ring all-reduces of the BF16
    activations (2 (G-1)/G of them each), and with expert parallelism each of its B/G
    tokens sent to its k experts in FP8 and returned in BF16 (3 bytes a value), the share
    (G-1)/G that leaves the GPU."""
    if layout.gpus <= 1:
        return 0.0
    allreduces, alltoalls = collectives_per_step(arch, layout)
    ring = 2 * (layout.gpus - 1) / layout.gpus
    reduce = allreduces * batch * arch.hidden_size * 2 * ring
    leaving = (layout.gpus - 1) / layout.gpus
    tokens = batch / layout.gpus
    dispatch = alltoalls / 2 * tokens * arch.active_experts * arch.hidden_size * 3 * leaving
    return reduce + dispatch


def max_concurrency(
    arch: Architecture, accel: Accelerator, precision: Precision, layout: Layout, shape: Shape
) -> float:
    """Sequences whose KV cache fits beside the weights (the roofline's capacity limit)."""
    weights = weight_bytes_per_gpu(arch, precision, layout, batch=math.inf)
    free = accel.hbm_gb * 1e9 * HBM_USABLE_FRACTION - weights
    per_sequence = kv_bytes_per_sequence(
        arch, precision, shape.input_tokens + shape.output_tokens, stored=True
    ) / kv_split(arch, layout)
    return max(float(free / per_sequence), 0.0)


@dataclass(frozen=True)
class Setup:
    """What a projection is of: a model served by an engine, in a precision and layout, on
    an accelerator, for a workload's shape."""

    arch: Architecture
    accel: Accelerator
    engine: str
    precision_name: str
    layout: Layout
    shape: Shape

    @property
    def precision(self) -> Precision:
        return Precision.named(self.precision_name)

    @property
    def key(self) -> tuple:
        """Hashable (an accelerator's FLOP/s table is a dict)."""
        names = (self.arch.name, self.accel.sku, self.engine, self.precision_name)
        return (*names, self.layout, self.shape)

    def max_concurrency(self) -> float:
        return max_concurrency(self.arch, self.accel, self.precision, self.layout, self.shape)


@dataclass(frozen=True)
class Observation:
    """One measured load level, as the calibration and the validation read it."""

    setup: Setup
    concurrency: float  # sequences the server ran at once
    tpot_s: float
    ttft_s: float
    interactivity: float  # tok/s/user, median
    tput_per_gpu: float  # total (input + output) tok/s per GPU of the deployment
    date: str = ""  # when it was run (ISO): the engine's version then
    # TTFT includes waiting for a slot (more clients than the server runs at once): the
    # point's TTFT and throughput factor stay out of the fit, its TPOT is used
    ttft_queued: bool = False

    @property
    def arch(self) -> Architecture:
        return self.setup.arch

    @property
    def accel(self) -> Accelerator:
        return self.setup.accel

    @property
    def engine(self) -> str:
        return self.setup.engine

    @property
    def precision_name(self) -> str:
        return self.setup.precision_name

    @property
    def layout(self) -> Layout:
        return self.setup.layout

    @property
    def shape(self) -> Shape:
        return self.setup.shape


def closed_loop_tput(
    concurrency: Batch, shape: Shape, layout: Layout, ttft_s: Batch, tpot_s: Batch
) -> Batch:
    """Total tok/s per GPU of `concurrency` sequences that each prefill, then decode."""
    e2el = ttft_s + shape.output_tokens * tpot_s
    return concurrency * (shape.input_tokens + shape.output_tokens) / e2el / layout.gpus
