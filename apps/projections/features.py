"""The roofline's terms as a point model's columns: seconds per decode step and per prefill,
for one setup at many concurrencies at once. Pure.

Each term is a physical cost from the model's architecture and the accelerator's datasheet
(apps/projections/model.py); a point model multiplies each by an inverse efficiency it fits
(apps/projections/pointmodels.py). Which terms a model has is its term set:

- "issue-44": the roofline of issue 44, one memory term for weights and KV cache together,
  one communication term (two all-reduces a layer);
- "per-phase": decode's memory split into the weights every token reads, the routed experts
  the batch touches (MoE expert traffic) and the KV cache, each with its own efficiency;
  communication from the layout (tensor-parallel all-reduces, expert-parallel all-to-alls);
- "per-phase +collectives": the same, plus each collective's latency (a count per step:
  what expert parallelism costs at a small batch, where no bandwidth term sees it).

Prefill is compute-bound in every set: its own FLOPs, waiting for the others' prefills, and
a fixed overhead.
"""

from collections.abc import Sequence

import numpy as np

from apps.projections.model import (
    COLLECTIVE_LATENCY_UNIT_S,
    STEP_OVERHEAD_UNIT_S,
    Observation,
    Setup,
    allreduce_bytes_per_gpu,
    collective_bytes_per_gpu,
    collectives_per_step,
    decode_flops_per_gpu,
    experts_touched_fraction,
    kv_bytes_per_gpu,
    prefill_flops_per_gpu,
)

TERM_SETS: dict[str, tuple[str, ...]] = {
    "issue-44": ("memory", "compute", "allreduce", "interference", "overhead"),
    "per-phase": (
        "weights", "experts", "kv", "compute", "interconnect", "interference", "overhead"
    ),
    "per-phase +collectives": (
        "weights", "experts", "kv", "compute", "interconnect", "interference", "overhead",
        "allreduce_latency", "alltoall_latency",
    ),
}  # fmt: skip
PREFILL_TERMS = ("prefill", "waiting", "overhead")


def prefill_seconds(setup: Setup) -> float:
    """One request's uncached prefill at the accelerator's dense FLOP/s."""
    flops = setup.accel.dense_flops(setup.precision.compute)
    return prefill_flops_per_gpu(setup.arch, setup.layout, setup.shape) / flops


def decode_terms(setup: Setup, batch: np.ndarray) -> dict[str, np.ndarray]:
    """Every decode term, in seconds per step, at each batch (concurrency) given."""
    arch, accel, layout, precision = setup.arch, setup.accel, setup.layout, setup.precision
    batch = np.asarray(batch, dtype=float)
    ones = np.ones_like(batch)
    bandwidth = accel.hbm_tb_s * 1e12
    link = accel.interconnect_gb_s * 1e9
    weight_bytes = precision.weight_bits / 8
    shared = arch.always_read_params / (1 if layout.dp_attention else layout.tp)
    routed = arch.routed_expert_params * experts_touched_fraction(arch, batch) / layout.gpus
    kv = kv_bytes_per_gpu(arch, precision, layout, batch, setup.shape.mean_context)
    flops = accel.dense_flops(precision.compute)
    allreduces, alltoalls = collectives_per_step(arch, layout)
    terms = {
        "memory": (shared + routed) * weight_bytes / bandwidth + kv / bandwidth,
        "weights": shared * weight_bytes / bandwidth,
        "experts": routed * weight_bytes / bandwidth,
        "kv": kv / bandwidth,
        "compute": decode_flops_per_gpu(arch, layout, batch, setup.shape.mean_context) / flops,
        "allreduce": allreduce_bytes_per_gpu(arch, layout, batch) / link,
        "interconnect": collective_bytes_per_gpu(arch, layout, batch) / link,
        "interference": batch * prefill_seconds(setup) / max(setup.shape.output_tokens, 1),
        "overhead": STEP_OVERHEAD_UNIT_S,
        "allreduce_latency": allreduces * COLLECTIVE_LATENCY_UNIT_S,
        "alltoall_latency": alltoalls * COLLECTIVE_LATENCY_UNIT_S,
    }
    return {name: np.asarray(value, dtype=float) * ones for name, value in terms.items()}


def decode_matrix(setup: Setup, batch: np.ndarray, terms: str) -> np.ndarray:
    """(len(batch), terms) seconds: the columns a decode efficiency multiplies."""
    found = decode_terms(setup, batch)
    return np.column_stack([found[name] for name in TERM_SETS[terms]])


def prefill_matrix(setup: Setup, batch: np.ndarray) -> np.ndarray:
    """(len(batch), 3) seconds: one's own prefill, the batch's prefills waited for, overhead."""
    batch = np.asarray(batch, dtype=float)
    own = prefill_seconds(setup)
    return np.column_stack(
        [own * np.ones_like(batch), batch * own, STEP_OVERHEAD_UNIT_S + 0 * batch]
    )


def observation_matrices(
    observations: Sequence[Observation], terms: str
) -> tuple[np.ndarray, np.ndarray]:
    """Each observation's decode and prefill rows at its own concurrency, computed one
    setup at a time (a setup's terms are one vectorised call over its concurrencies)."""
    by_setup: dict[tuple, list[int]] = {}
    for i, obs in enumerate(observations):
        by_setup.setdefault(obs.setup.key, []).append(i)
    decode = np.zeros((len(observations), len(TERM_SETS[terms])))
    prefill = np.zeros((len(observations), len(PREFILL_TERMS)))
    for rows in by_setup.values():
        setup = observations[rows[0]].setup
        batch = np.array([observations[i].concurrency for i in rows])
        decode[rows] = decode_matrix(setup, batch, terms)
        prefill[rows] = prefill_matrix(setup, batch)
    return decode, prefill
