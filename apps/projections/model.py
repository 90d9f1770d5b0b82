"""Projections for hardware nobody here measured: a roofline with calibrated efficiency.

Pure functions, no I/O (the reference data is read by apps/projections/reference.py).

Per decode step on one GPU of an instance of G GPUs serving B concurrent sequences:

- memory time  = (weight bytes read + KV-cache bytes read) / HBM bandwidth
- compute time = (2 x active parameters x B + attention FLOPs) / (G x dense FLOP/s)
- comm time    = tensor-parallel all-reduce bytes / interconnect bandwidth
- prefill interference = the prefills of the B sequences spread over their output tokens

TPOT = a.mem + b.compute + c.comm + d.prefill + e (a step's fixed overhead), and
TTFT = f.prefill + g.(B x prefill) (waiting for the others' prefills) + h. The coefficients
are the inverse efficiencies of one engine on one accelerator family, fitted by
non-negative least squares on measured or imported points (never set by hand); throughput
per GPU follows from the closed loop: B x (ISL + OSL) / (TTFT + OSL x TPOT) / G, scaled by a
fitted factor that absorbs the spread of the benchmark's request lengths.
"""

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

# Headroom the engines keep out of HBM (activations, graphs, fragmentation): the KV cache
# gets the rest. sglang's default mem_fraction_static is in this range.
HBM_USABLE_FRACTION = 0.88
MIN_POINTS_PER_FIT = 8
# The fixed per-step cost enters the fit in milliseconds so its column is of the same
# order as the others (the least squares is then well conditioned).
STEP_OVERHEAD_UNIT_S = 1e-3


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
        table = {
            "fp4": cls(compute="fp4", weight_bits=4.25),
            "mxfp4": cls(compute="fp4", weight_bits=4.25),
            "nvfp4": cls(compute="fp4", weight_bits=4.5),
            "fp8": cls(compute="fp8", weight_bits=8),
            "bf16": cls(compute="bf16", weight_bits=16),
        }
        try:
            return table[name.lower()]
        except KeyError:
            raise ValueError(f"unknown precision {name!r}: one of {sorted(table)}") from None


@dataclass(frozen=True)
class Layout:
    gpus: int  # GPUs of one serving instance (tensor/expert parallel group)
    tp: int
    dp_attention: bool = False


@dataclass(frozen=True)
class Shape:
    input_tokens: int
    output_tokens: int
    prefix_cache_hit_rate: float = 0.0

    @property
    def mean_context(self) -> float:
        return self.input_tokens + self.output_tokens / 2


# --- roofline terms (each hand-checkable; tests/apps/projections/test_model.py) ---


def experts_touched_fraction(arch: Architecture, batch: float) -> float:
    """Share of routed experts a step reads when `batch` tokens each pick k of E at random."""
    if not arch.is_moe:
        return 1.0
    return 1 - (1 - arch.active_experts / arch.experts) ** max(batch, 1)


def weight_bytes_per_gpu(
    arch: Architecture, precision: Precision, layout: Layout, batch: float
) -> float:
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
    arch: Architecture, precision: Precision, layout: Layout, batch: float, context: float
) -> float:
    return batch * kv_bytes_per_sequence(arch, precision, context) / kv_split(arch, layout)


def decode_flops_per_gpu(arch: Architecture, layout: Layout, batch: float, context: float) -> float:
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


def allreduce_bytes_per_gpu(arch: Architecture, layout: Layout, batch: float) -> float:
    """Ring all-reduce traffic of two BF16 activations per layer (attention and MLP)."""
    if layout.gpus <= 1:
        return 0.0
    ring = 2 * (layout.gpus - 1) / layout.gpus
    return 2 * arch.layers * batch * arch.hidden_size * 2 * ring


def max_concurrency(
    arch: Architecture, accel: Accelerator, precision: Precision, layout: Layout, shape: Shape
) -> float:
    """Sequences whose KV cache fits beside the weights (the roofline's capacity limit)."""
    weights = weight_bytes_per_gpu(arch, precision, layout, batch=math.inf)
    free = accel.hbm_gb * 1e9 * HBM_USABLE_FRACTION - weights
    per_sequence = kv_bytes_per_sequence(
        arch, precision, shape.input_tokens + shape.output_tokens, stored=True
    ) / kv_split(arch, layout)
    return max(free / per_sequence, 0.0)


@dataclass(frozen=True)
class Terms:
    """The roofline's seconds for one decode step and one prefill, before efficiency."""

    memory_s: float
    compute_s: float
    comm_s: float
    prefill_s: float

    def decode_features(self, batch: float, shape: Shape) -> list[float]:
        interference = batch * self.prefill_s / max(shape.output_tokens, 1)
        return [self.memory_s, self.compute_s, self.comm_s, interference, STEP_OVERHEAD_UNIT_S]

    def prefill_features(self, batch: float) -> list[float]:
        return [self.prefill_s, batch * self.prefill_s, STEP_OVERHEAD_UNIT_S]


def roofline_terms(
    arch: Architecture,
    accel: Accelerator,
    precision: Precision,
    layout: Layout,
    shape: Shape,
    batch: float,
) -> Terms:
    context = shape.mean_context
    read = weight_bytes_per_gpu(arch, precision, layout, batch) + kv_bytes_per_gpu(
        arch, precision, layout, batch, context
    )
    flops = accel.dense_flops(precision.compute)
    return Terms(
        memory_s=read / (accel.hbm_tb_s * 1e12),
        compute_s=decode_flops_per_gpu(arch, layout, batch, context) / flops,
        comm_s=allreduce_bytes_per_gpu(arch, layout, batch) / (accel.interconnect_gb_s * 1e9),
        prefill_s=prefill_flops_per_gpu(arch, layout, shape) / flops,
    )


# --- calibration ---


@dataclass(frozen=True)
class Observation:
    """One measured load level, as the calibration and the validation read it."""

    arch: Architecture
    accel: Accelerator
    engine: str
    precision_name: str
    layout: Layout
    shape: Shape
    concurrency: float
    tpot_s: float
    ttft_s: float
    interactivity: float  # tok/s/user, median
    tput_per_gpu: float  # total (input + output) tok/s per GPU
    # TTFT includes waiting for a slot (more clients than the server runs at once): the
    # point's TTFT and throughput factor stay out of the fit, its TPOT is used
    ttft_queued: bool = False

    @property
    def precision(self) -> Precision:
        return Precision.named(self.precision_name)

    def terms(self) -> Terms:
        return roofline_terms(
            self.arch, self.accel, self.precision, self.layout, self.shape, self.concurrency
        )


@dataclass(frozen=True)
class Efficiency:
    """Inverse efficiencies fitted for one engine on one accelerator family."""

    key: tuple[str, str]
    decode: tuple[float, ...]
    prefill: tuple[float, ...]
    throughput_factor: float
    points: int
    fallback: bool = False  # fitted on a wider group than the one asked for


def nnls(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Least squares with every coefficient >= 0 (an efficiency cannot be negative).

    Written here rather than adding scipy for one call: the active-set loop of Lawson and
    Hanson, small enough for five columns."""
    active = list(range(a.shape[1]))
    x = np.zeros(a.shape[1])
    while active:
        sol, *_ = np.linalg.lstsq(a[:, active], b, rcond=None)
        if (sol >= 0).all():
            x[:] = 0
            x[active] = sol
            return x
        active.pop(int(np.argmin(sol)))
    return x


def fit_efficiency(observations: Sequence[Observation], key: tuple[str, str]) -> Efficiency:
    """Relative-error least squares: each row is divided by its measured value."""
    if not observations:
        raise ValueError(f"no observations to calibrate {key}")
    dec_rows, dec_y, pre_rows, pre_y, ratios = [], [], [], [], []
    # all queued (no group the fallback picks is): use them all rather than fit nothing
    skip_queued = not all(o.ttft_queued for o in observations)
    for obs in observations:
        terms = obs.terms()
        dec_rows.append(np.array(terms.decode_features(obs.concurrency, obs.shape)) / obs.tpot_s)
        dec_y.append(1.0)
        if obs.ttft_queued and skip_queued:
            continue
        pre_rows.append(np.array(terms.prefill_features(obs.concurrency)) / obs.ttft_s)
        pre_y.append(1.0)
        ideal = closed_loop_tput(obs.concurrency, obs.shape, obs.layout, obs.ttft_s, obs.tpot_s)
        ratios.append(math.log(obs.tput_per_gpu / ideal))
    decode = nnls(np.array(dec_rows), np.array(dec_y))
    prefill = nnls(np.array(pre_rows), np.array(pre_y))
    return Efficiency(
        key=key,
        decode=tuple(float(v) for v in decode),
        prefill=tuple(float(v) for v in prefill),
        throughput_factor=math.exp(float(np.mean(ratios))),
        points=len(observations),
    )


# The fallback orders compared (bench/projection_choices.py scores each by nested
# leave-one-accelerator-out: chosen on the calibration accelerators only). A group's
# second element matches an accelerator's family or its vendor.
FALLBACK_ORDERS = {
    "family-first": lambda e, a: [(e, a.family), ("*", a.family), (e, "*"), ("*", "*")],
    "engine-first": lambda e, a: [(e, a.family), (e, "*"), ("*", a.family), ("*", "*")],
    "vendor-first": lambda e, a: [
        (e, a.family), (e, a.vendor), ("*", a.family), ("*", a.vendor), (e, "*"), ("*", "*")
    ],
    "family-then-vendor": lambda e, a: [
        (e, a.family), ("*", a.family), (e, a.vendor), ("*", a.vendor), (e, "*"), ("*", "*")
    ],
}  # fmt: skip
DEFAULT_FALLBACK_ORDER = "family-first"


def fallback_keys(
    engine: str, accel: Accelerator, order: str = DEFAULT_FALLBACK_ORDER
) -> list[tuple[str, str]]:
    """Where a projection borrows its efficiency, narrowest first: by default the
    accelerator family before the engine (a sibling chip run by another engine predicts
    better than the same engine on another family, and far better than the same vendor's
    previous generation). This order was first chosen on the validation itself; nested
    leave-one-accelerator-out (bench/projection_choices.py) picks it again in five of the
    six outer folds from the calibration accelerators alone."""
    return FALLBACK_ORDERS[order](engine, accel)


def calibrate(
    observations: Iterable[Observation],
    *,
    engine: str,
    accel: Accelerator,
    order: str = DEFAULT_FALLBACK_ORDER,
) -> Efficiency:
    """The efficiency for `engine` on `accel`'s family from the narrowest group of
    observations with enough points (fallback_keys)."""
    pool = list(observations)
    for i, key in enumerate(fallback_keys(engine, accel, order)):
        chosen = [
            o
            for o in pool
            if key[0] in ("*", o.engine) and key[1] in ("*", o.accel.family, o.accel.vendor)
        ]
        if len(chosen) >= MIN_POINTS_PER_FIT:
            eff = fit_efficiency(chosen, key)
            return Efficiency(**{**eff.__dict__, "fallback": i > 0})
    raise ValueError(f"fewer than {MIN_POINTS_PER_FIT} observations to calibrate {engine}")


# --- projection ---


def closed_loop_tput(
    concurrency: float, shape: Shape, layout: Layout, ttft_s: float, tpot_s: float
) -> float:
    """Total tok/s per GPU of `concurrency` sequences that each prefill, then decode."""
    e2el = ttft_s + shape.output_tokens * tpot_s
    return concurrency * (shape.input_tokens + shape.output_tokens) / e2el / layout.gpus


@dataclass(frozen=True)
class ProjectedPoint:
    concurrency: float
    tpot_s: float
    ttft_s: float
    interactivity: float
    tput_per_gpu: float  # total
    output_tput_per_gpu: float
    within_capacity: bool


@dataclass(frozen=True)
class Setup:
    """What a projection is of: a model, in a precision and layout, on an accelerator."""

    arch: Architecture
    accel: Accelerator
    precision: Precision
    layout: Layout
    shape: Shape
    efficiency: Efficiency
    # measured / modelled TPOT of the same model on a measured accelerator (1 = none)
    anchor: float = 1.0
    notes: list[str] = field(default_factory=list)


def project(setup: Setup, concurrency: float) -> ProjectedPoint:
    terms = roofline_terms(
        setup.arch, setup.accel, setup.precision, setup.layout, setup.shape, concurrency
    )
    eff = setup.efficiency
    tpot = setup.anchor * float(np.dot(eff.decode, terms.decode_features(concurrency, setup.shape)))
    ttft = float(np.dot(eff.prefill, terms.prefill_features(concurrency)))
    tput = eff.throughput_factor * closed_loop_tput(
        concurrency, setup.shape, setup.layout, ttft, tpot
    )
    shape = setup.shape
    return ProjectedPoint(
        concurrency=concurrency,
        tpot_s=tpot,
        ttft_s=ttft,
        interactivity=1 / tpot,
        tput_per_gpu=tput,
        output_tput_per_gpu=tput * shape.output_tokens / (shape.input_tokens + shape.output_tokens),
        within_capacity=concurrency
        <= max_concurrency(setup.arch, setup.accel, setup.precision, setup.layout, shape),
    )


MIN_CONCURRENCY = 1.0
MAX_CONCURRENCY = 16384.0


def at_interactivity(setup: Setup, interactivity: float) -> ProjectedPoint | None:
    """The projected point at a given tok/s/user (interactivity falls as concurrency
    grows); None when the projection never reaches it (faster than one stream)."""
    low, high = math.log(MIN_CONCURRENCY), math.log(MAX_CONCURRENCY)
    if project(setup, MIN_CONCURRENCY).interactivity < interactivity:
        return None
    if project(setup, MAX_CONCURRENCY).interactivity > interactivity:
        return project(setup, MAX_CONCURRENCY)
    for _ in range(60):  # bisection on log concurrency: the curve is monotone
        mid = (low + high) / 2
        if project(setup, math.exp(mid)).interactivity > interactivity:
            low = mid
        else:
            high = mid
    return project(setup, math.exp((low + high) / 2))


def curve(setup: Setup, concurrencies: Sequence[float]) -> list[ProjectedPoint]:
    return [project(setup, c) for c in concurrencies]


def anchor_factor(measured_tpot_s: float, modelled: ProjectedPoint) -> float:
    """How far the model is off for this model on a measured accelerator, carried over to
    the one projected (the engine and model quirks the DeepSeek-R1 calibration lacks)."""
    return measured_tpot_s / modelled.tpot_s
