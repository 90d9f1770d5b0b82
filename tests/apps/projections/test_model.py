"""The roofline's terms against values computed by hand, for one dense and one MoE model, and
what the point models do with them."""

import math

import numpy as np
import pytest

from apps.projections import features
from apps.projections.model import (
    Accelerator,
    Architecture,
    Layout,
    Observation,
    Precision,
    Setup,
    Shape,
    collective_bytes_per_gpu,
    collectives_per_step,
    decode_flops_per_gpu,
    experts_touched_fraction,
    kv_bytes_per_gpu,
    max_concurrency,
    prefill_flops_per_gpu,
    weight_bytes_per_gpu,
)
from apps.projections.pointmodels import (
    FALLBACK_ORDERS,
    NEAR,
    Candidate,
    Curve,
    nnls,
)

LLAMA_70B = Architecture(
    name="dense",
    params_total_b=70,
    params_active_b=70,
    layers=80,
    hidden_size=8192,
    attention_heads=64,
    kv_heads=8,
    head_dim=128,
    kv_layout="gqa",
)
# A small MoE with DeepSeek-style latent attention and round numbers:
# 8 experts, 2 active; total 100B, active 40B -> routed experts 60B / (1 - 2/8) = 80B,
# always read 20B.
MOE = Architecture(
    name="moe",
    params_total_b=100,
    params_active_b=40,
    layers=10,
    hidden_size=4096,
    attention_heads=32,
    kv_heads=32,
    head_dim=128,
    kv_layout="mla",
    experts=8,
    active_experts=2,
    kv_lora_rank=512,
    qk_rope_head_dim=64,
)
CHIP = Accelerator(
    sku="X1",
    family="test",
    vendor="Test",
    hbm_gb=100,
    hbm_tb_s=4.0,
    tflops={"bf16": 1000, "fp8": 2000},
    interconnect_gb_s=500,
)
FP8 = Precision(compute="fp8", weight_bits=8, kv_bits=16)


def test_a_dense_model_reads_its_weights_split_by_tensor_parallelism():
    # 70e9 params x 1 byte / TP4 = 17.5 GB per GPU, whatever the batch
    layout = Layout(gpus=4, tp=4)
    assert weight_bytes_per_gpu(LLAMA_70B, FP8, layout, batch=1) == pytest.approx(17.5e9)
    assert weight_bytes_per_gpu(LLAMA_70B, FP8, layout, batch=64) == pytest.approx(17.5e9)


def test_a_dense_models_kv_cache_is_split_by_kv_head():
    # 2 x 8 heads x 128 x 80 layers x 2 bytes = 327,680 B per token; 1000 tokens x 10
    # sequences / min(TP4, 8 heads) = 819.2 MB per GPU
    layout = Layout(gpus=4, tp=4)
    kv = kv_bytes_per_gpu(LLAMA_70B, FP8, layout, batch=10, context=1000)
    assert kv == pytest.approx(327_680 * 1000 * 10 / 4)


def test_a_dense_models_decode_flops_count_matmuls_and_attention():
    # matmul 2 x 70e9 x 8 = 1.12e12; attention 2 x 80 x 64 x 256 x 1000 x 8 = 2.097e10
    layout = Layout(gpus=2, tp=2)
    flops = decode_flops_per_gpu(LLAMA_70B, layout, batch=8, context=1000)
    assert flops == pytest.approx((1.12e12 + 2 * 80 * 64 * 256 * 1000 * 8) / 2)


def test_a_dense_models_prefill_skips_the_cached_prefix():
    # 1000 input tokens, 60% cached: 400 new tokens attending to 600 + 200 on average
    layout = Layout(gpus=1, tp=1)
    shape = Shape(input_tokens=1000, output_tokens=100, prefix_cache_hit_rate=0.6)
    expected = 2 * 70e9 * 400 + 2 * 80 * 64 * 256 * 800 * 400
    assert prefill_flops_per_gpu(LLAMA_70B, layout, shape) == pytest.approx(expected)


def test_the_roofline_terms_divide_by_the_datasheet():
    layout = Layout(gpus=4, tp=4)
    setup = Setup(LLAMA_70B, CHIP, "e", "fp8", layout, Shape(input_tokens=1000, output_tokens=0))
    terms = {k: float(v[0]) for k, v in features.decode_terms(setup, np.array([10.0])).items()}
    assert terms["memory"] == pytest.approx((17.5e9 + 327_680 * 1000 * 10 / 4) / 4e12)
    assert terms["compute"] == pytest.approx(
        decode_flops_per_gpu(LLAMA_70B, layout, 10, 1000) / 2e15
    )
    # ring all-reduce: 2 per layer x 10 x 8192 x 2 bytes x 2 x 3/4
    assert terms["allreduce"] == pytest.approx(2 * 80 * 10 * 8192 * 2 * 1.5 / 500e9)
    # a dense model without expert parallelism: the per-phase interconnect term is the same
    assert terms["interconnect"] == pytest.approx(terms["allreduce"])
    assert collective_bytes_per_gpu(LLAMA_70B, layout, 10) == pytest.approx(
        terms["allreduce"] * 500e9
    )


def test_a_moe_model_reads_more_experts_as_the_batch_grows():
    # one token reads 2 of 8 experts; two tokens 1 - (6/8)^2 = 7/16 of them
    assert experts_touched_fraction(MOE, 1) == pytest.approx(0.25)
    assert experts_touched_fraction(MOE, 2) == pytest.approx(7 / 16)
    layout = Layout(gpus=4, tp=4)
    # 20B always read / TP4 + 80B x 1/4 / 4 GPUs = 5 GB + 5 GB at one byte each
    assert weight_bytes_per_gpu(MOE, FP8, layout, batch=1) == pytest.approx(10e9)
    # a huge batch reads every expert: 5 GB + 80 GB / 4
    assert weight_bytes_per_gpu(MOE, FP8, layout, batch=math.inf) == pytest.approx(25e9)


def test_data_parallel_attention_replicates_the_shared_weights_and_splits_the_latent_cache():
    tp_only, dp_attn = Layout(gpus=4, tp=4), Layout(gpus=4, tp=4, dp_attention=True)
    # the latent: (512 + 64) x 10 layers x 2 bytes = 11,520 B per token
    per_sequence = 11_520 * 2000
    assert kv_bytes_per_gpu(MOE, FP8, tp_only, 3, 2000) == pytest.approx(3 * per_sequence)
    assert kv_bytes_per_gpu(MOE, FP8, dp_attn, 3, 2000) == pytest.approx(3 * per_sequence / 4)
    # shared 20 GB on every GPU; experts still split four ways
    assert weight_bytes_per_gpu(MOE, FP8, dp_attn, batch=1) == pytest.approx(20e9 + 5e9)


def test_a_moe_models_flops_count_only_active_parameters():
    layout = Layout(gpus=4, tp=4)
    attention = 2 * 10 * 32 * (512 * 2 + 64) * 1000
    assert decode_flops_per_gpu(MOE, layout, batch=4, context=1000) == pytest.approx(
        (2 * 40e9 * 4 + attention * 4) / 4
    )


def test_sparse_attention_reads_only_its_top_k_but_stores_every_token():
    sparse = Architecture(**{**MOE.__dict__, "sparse_attention_top_k": 500})
    layout = Layout(gpus=1, tp=1)
    assert kv_bytes_per_gpu(sparse, FP8, layout, 1, 2000) == pytest.approx(11_520 * 500)
    shape = Shape(input_tokens=1900, output_tokens=100)
    # capacity: 100 GB x 0.88 - 100 GB of weights leaves nothing on one chip
    assert max_concurrency(sparse, CHIP, FP8, layout, shape) == 0
    big = Accelerator(**{**CHIP.__dict__, "hbm_gb": 200})
    free = 200e9 * 0.88 - 100e9
    assert max_concurrency(sparse, big, FP8, layout, shape) == pytest.approx(free / (11_520 * 2000))


def test_the_least_squares_never_returns_a_negative_efficiency():
    a = np.array([[1.0, 1.0], [1.0, 2.0], [1.0, 3.0]])
    b = np.array([3.0, 2.0, 1.0])  # unconstrained: intercept 4, slope -1
    x = nnls(a, b)
    assert (x >= 0).all()
    assert x[1] == 0 and x[0] == pytest.approx(2.0)


def test_expert_parallelism_trades_the_mlp_all_reduce_for_two_all_to_alls():
    moe = Architecture(**{**MOE.__dict__, "dense_layers": 2})  # 8 MoE layers of 10
    assert collectives_per_step(moe, Layout(gpus=4, tp=4)) == (20, 0)
    # experts spread over the 4 GPUs: attention still all-reduces (10), the 2 dense MLPs
    # too, and each MoE layer sends its tokens out and back
    assert collectives_per_step(moe, Layout(gpus=4, tp=4, ep=4)) == (12, 16)
    # data-parallel attention: no attention all-reduce
    assert collectives_per_step(moe, Layout(gpus=4, tp=4, dp_attention=True, ep=4)) == (2, 16)
    assert collectives_per_step(moe, Layout(gpus=1, tp=1)) == (0, 0)
    # bytes: 12 ring all-reduces of 8 x 4096 BF16 (x 2 x 3/4), and 8 MoE layers sending each
    # of 8 / 4 tokens to 2 experts at 3 bytes a value, 3/4 of it leaving the GPU
    reduce = 12 * 8 * 4096 * 2 * 1.5
    dispatch = 8 * 2 * 2 * 4096 * 3 * 0.75
    got = collective_bytes_per_gpu(moe, Layout(gpus=4, tp=4, ep=4), batch=8)
    assert got == pytest.approx(reduce + dispatch)


def test_the_per_phase_terms_split_memory_into_weights_experts_and_kv_cache():
    setup = Setup(MOE, CHIP, "e", "fp8", Layout(gpus=4, tp=4), Shape(1000, 1000))
    batch = np.array([1.0, 64.0])
    terms = features.decode_terms(setup, batch)
    # together they are issue 44's single memory term
    np.testing.assert_allclose(terms["weights"] + terms["experts"] + terms["kv"], terms["memory"])
    # 20B always-read params / TP4 at one byte, over 4 TB/s: 1.25 ms at any batch
    np.testing.assert_allclose(terms["weights"], [5e9 / 4e12] * 2)
    # the experts a batch of 1 touches: 80B x 1/4 / 4 GPUs
    assert terms["experts"][0] == pytest.approx(5e9 / 4e12)
    matrix = features.decode_matrix(setup, batch, "per-phase +collectives")
    assert matrix.shape == (2, len(features.TERM_SETS["per-phase +collectives"]))


def _observation(setup: Setup, concurrency: float, tpot: float, date: str) -> Observation:
    ttft = 0.2
    e2el = ttft + setup.shape.output_tokens * tpot
    total = setup.shape.input_tokens + setup.shape.output_tokens
    return Observation(
        setup=setup,
        concurrency=concurrency,
        tpot_s=tpot,
        ttft_s=ttft,
        interactivity=1 / tpot,
        tput_per_gpu=concurrency * total / e2el / setup.layout.gpus,
        date=date,
    )


def _measured(setup: Setup, slowdown: float, date: str = "2026-01-10") -> list[Observation]:
    """Points whose TPOT is exactly `slowdown` x (memory time + 1 ms)."""
    found = []
    for c in (1, 2, 4, 8, 16, 32, 64, 128):
        terms = features.decode_terms(setup, np.array([float(c)]))
        tpot = slowdown * float(terms["memory"][0] + 1e-3)
        found.append(_observation(setup, c, tpot, date))
    return found


FAMILY = {
    "A1": ("fam-a", "V"),
    "A2": ("fam-a", "V"),
    "B1": ("fam-b", "V"),
}


def _chip(sku: str) -> Accelerator:
    family, vendor = FAMILY[sku]
    return Accelerator(**{**CHIP.__dict__, "sku": sku, "family": family, "vendor": vendor})


def test_a_fit_recovers_the_efficiencies_it_was_given():
    setup = Setup(MOE, CHIP, "e", "fp8", Layout(gpus=4, tp=4), Shape(1000, 1000))
    fitted = Candidate("t", terms="issue-44").fit(_measured(setup, 1.0))
    eff = fitted.efficiency(setup)
    # TPOT = 1 x memory + 1 ms: the memory and overhead columns
    assert eff.decode[0] == pytest.approx(1.0, rel=1e-6)
    assert eff.decode[4] == pytest.approx(1.0, rel=1e-6)
    curve = fitted.curve(setup, "", np.array([4.0]))
    assert curve.tpot_s[0] == pytest.approx(_measured(setup, 1.0)[2].tpot_s, rel=1e-6)


def test_the_transfer_carries_a_sibling_runs_miss_and_fades_with_time():
    shape, layout = Shape(1000, 1000), Layout(gpus=4, tp=4)
    setups = {sku: Setup(MOE, _chip(sku), "e", "fp8", layout, shape) for sku in FAMILY}
    # B1 measures as its roofline (memory + 1 ms); A2, A1's sibling, runs 30% slower
    train = _measured(setups["A2"], 1.3) + _measured(setups["B1"], 1.0) * 3
    # one efficiency for every family (engine-wide), so only the transfer can tell A from B
    plain = Candidate("plain", terms="issue-44", order="engine-wide").fit(train)
    moved = Candidate("moved", terms="issue-44", order="engine-wide", transfer=NEAR).fit(train)
    at = np.array([4.0])
    roofline = _measured(setups["A1"], 1.0)[2].tpot_s
    a1_plain = plain.curve(setups["A1"], "2026-01-10", at).tpot_s[0]
    a1_moved = moved.curve(setups["A1"], "2026-01-10", at).tpot_s[0]
    assert a1_plain / roofline < 1.15  # the pooled fit sits near B1's
    # the sibling's miss is carried, shrunk a little toward none
    assert a1_moved / roofline == pytest.approx(1.3, rel=0.05)
    # runs a year away from the date asked weigh nothing: back to the roofline's fit
    a1_later = moved.curve(setups["A1"], "2027-01-10", at).tpot_s[0]
    assert a1_later == pytest.approx(a1_plain, rel=1e-3)


def test_interactivity_is_matched_on_the_projected_curve():
    concurrency = np.geomspace(1, 256, 50)
    tpot = 0.01 * (1 + concurrency / 32)
    curve = Curve(concurrency, tpot, 0 * tpot + 0.1, concurrency / tpot)
    # at 32 sequences, TPOT is 0.02 s: 50 tok/s/user, and throughput 32 / 0.02
    assert curve.tput_at_interactivity(50) == pytest.approx(32 / 0.02, rel=0.01)
    # faster than the curve gets at one sequence: not reached
    assert curve.tput_at_interactivity(1 / 0.01 * 1.01) is None
    # a point on the curve (between its samples) is at distance 0
    assert curve.distance(50, 32 / 0.02) == pytest.approx(0, abs=1e-3)  # off the chord only
    # one 10% above it in throughput is nearer than 10%: the curve can move along both
    # axes at once (down its slope here)
    assert 0 < curve.distance(50, 32 / 0.02 * 1.1) < math.log(1.1)
    flat = Curve(concurrency, 0 * tpot + 0.01, 0 * tpot + 0.1, concurrency * 100)
    # a curve flat in interactivity: 10% faster per user is 10% away whatever the throughput
    assert flat.distance(110, 500) == pytest.approx(math.log(1.1), rel=1e-9)


def test_the_fallback_orders_borrow_a_sibling_family_before_the_engine_elsewhere():
    assert FALLBACK_ORDERS["family-first"]("sglang", CHIP) == [
        ("sglang", "test"),
        ("*", "test"),
        ("sglang", "*"),
        ("*", "*"),
    ]
    assert FALLBACK_ORDERS["engine-wide"]("sglang", CHIP) == [("sglang", "*"), ("*", "*")]
