"""The roofline's terms against values computed by hand, for one dense and one MoE model."""

import math

import numpy as np
import pytest

from apps.projections.model import (
    Accelerator,
    Architecture,
    Efficiency,
    Layout,
    Precision,
    Setup,
    Shape,
    at_interactivity,
    decode_flops_per_gpu,
    experts_touched_fraction,
    fallback_keys,
    kv_bytes_per_gpu,
    max_concurrency,
    nnls,
    prefill_flops_per_gpu,
    project,
    roofline_terms,
    weight_bytes_per_gpu,
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
    shape = Shape(input_tokens=1000, output_tokens=0)
    terms = roofline_terms(LLAMA_70B, CHIP, FP8, layout, shape, batch=10)
    assert terms.memory_s == pytest.approx((17.5e9 + 327_680 * 1000 * 10 / 4) / 4e12)
    assert terms.compute_s == pytest.approx(
        decode_flops_per_gpu(LLAMA_70B, layout, 10, 1000) / 2e15
    )
    # ring all-reduce: 2 per layer x 10 x 8192 x 2 bytes x 2 x 3/4
    assert terms.comm_s == pytest.approx(2 * 80 * 10 * 8192 * 2 * 1.5 / 500e9)


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


def test_interactivity_is_matched_by_solving_for_the_concurrency():
    eff = Efficiency(
        key=("e", "f"), decode=(1, 1, 1, 1, 1), prefill=(1, 0, 0), throughput_factor=1, points=9
    )
    setup = Setup(
        arch=LLAMA_70B,
        accel=CHIP,
        precision=FP8,
        layout=Layout(gpus=4, tp=4),
        shape=Shape(input_tokens=1000, output_tokens=1000),
        efficiency=eff,
    )
    target = project(setup, 37).interactivity
    found = at_interactivity(setup, target)
    assert found is not None and found.concurrency == pytest.approx(37, rel=1e-6)
    assert at_interactivity(setup, project(setup, 1).interactivity * 2) is None


def test_the_default_fallback_borrows_a_sibling_chip_before_the_engine_elsewhere():
    assert fallback_keys("sglang", CHIP) == [
        ("sglang", "test"),
        ("*", "test"),
        ("sglang", "*"),
        ("*", "*"),
    ]
    # the alternatives bench/projection_choices.py scores try the same vendor's other
    # families before any vendor
    assert fallback_keys("sglang", CHIP, "vendor-first")[1] == ("sglang", "Test")
