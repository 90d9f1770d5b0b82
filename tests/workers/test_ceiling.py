"""The physical ceiling (workers/ceiling.py): a bound from the shipped datasheets that every
measured row the project ships stays under, that the forged figures of issue 53 break, and
that says in a sentence which limit it is."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from workers import accelerator_specs, ceiling
from workers.ceiling import MARGIN, ceiling_for, compute_format, format_bits, shipped_specs

INFERENCEX = Path(ceiling.__file__).resolve().parents[1] / "apps/catalog/reference/inferencex"
COOKBOOK = INFERENCEX.parent / "glm52-cookbook.json"


def shipped_datasheet(sku: str) -> dict:
    entry = accelerator_specs.entry(sku)
    assert entry is not None
    return entry


def shipped_architecture(name: str) -> dict:
    rows = json.loads((ceiling.REFERENCE_DIR / "models.json").read_text())["models"]
    return next(row for row in rows if row["name"] == name)


@pytest.mark.parametrize("model", ["DeepSeek-R1", "GLM 5.2"])
@pytest.mark.parametrize("sku", ["B200", "MI355X"])
@pytest.mark.parametrize("precision", ["fp8", "fp4"])
def test_the_compute_bound_is_the_datasheets_flops_over_two_flops_per_active_parameter(
    model, sku, precision
):
    bound = ceiling_for(accelerator=sku, model=model, weights=precision, figure="total")
    tflops = shipped_datasheet(sku)["tflops"][precision]
    active_b = shipped_architecture(model)["params_active_b"]
    assert bound.limit == "compute"
    assert bound.tok_s_per_gpu == pytest.approx(tflops * 1e12 / (2 * active_b * 1e9) * MARGIN)
    assert f"{tflops:,} TFLOP/s dense {precision.upper()}" in bound.sentence
    assert f"2 × {active_b:g} B active parameters" in bound.sentence
    assert "25% margin" in bound.sentence


def test_at_low_concurrency_memory_bandwidth_is_the_bound_on_output():
    bound = ceiling_for(
        accelerator="B200", model="DeepSeek-R1", weights="FP8", figure="output", concurrency=4
    )
    datasheet, active_b = shipped_datasheet("B200"), shipped_architecture("DeepSeek-R1")
    expected = 4 * datasheet["hbm_tb_s"] * 1e12 / (active_b["params_active_b"] * 1e9) * MARGIN
    assert bound.limit == "memory"
    assert bound.tok_s_per_gpu == pytest.approx(expected)
    assert "8 TB/s of HBM" in bound.sentence and "at most 4 sequences" in bound.sentence
    # Speculative decoding gives each sequence more tokens per step: the bound says so.
    drafted = ceiling_for(
        accelerator="B200",
        model="DeepSeek-R1",
        weights="FP8",
        figure="output",
        concurrency=4,
        tokens_per_step=4,
    )
    assert drafted.tok_s_per_gpu == pytest.approx(4 * expected)
    assert "4 tokens per step" in drafted.sentence


def test_hbm_bounds_the_batch_when_the_context_is_long():
    held = ceiling.batch_held(
        shipped_specs().chips["B200"],
        shipped_specs().models["deepseek-r1"],
        gpus=8,
        weight_bits=8,
        context_tokens=1_000_000,
    )
    wide = ceiling_for(
        accelerator="B200",
        model="DeepSeek-R1",
        weights="FP8",
        figure="output",
        gpus=8,
        concurrency=1_000_000,
        context_tokens=1_000_000,
    )
    assert held is not None and held < 1_000_000
    assert f"at most {math.floor(held):,} sequences" in wide.sentence
    # Weights that do not fit in HBM are offloaded: HBM then bounds no batch.
    one_h200 = shipped_specs()
    assert (
        ceiling.batch_held(
            one_h200.chips["H200"],
            one_h200.models["deepseek-r1"],
            gpus=1,
            weight_bits=8,
            context_tokens=2000,
        )
        is None
    )


def shipped_rows() -> list[dict]:
    latest = json.loads((INFERENCEX / "benchmarks.json").read_text())
    history = json.loads((INFERENCEX / "benchmarks-history.json").read_text())
    return [row for row in latest + history if "output_tput_per_gpu" in row["metrics"]]


def test_every_measured_row_the_project_ships_is_under_its_ceiling():
    """1,895 InferenceX rows (DeepSeek-R1 on nine accelerators, FP8 and FP4, up to 16-GPU
    disaggregated deployments, MTP taken at one token per step, the strictest reading) and
    sglang's GLM 5.2 cells: the ceiling refuses none of them, so it cannot refuse a real
    run of these shapes."""
    rows = shipped_rows()
    assert len(rows) > 1800
    highest = 0.0
    for row in rows:
        m = row["metrics"]
        gpus = row["num_prefill_gpu"] + row["num_decode_gpu"] if row["disagg"] else row["decode_tp"]
        facts = {"accelerator": row["hardware"], "model": row["model"], "weights": row["precision"]}
        total = ceiling_for(**facts, figure="total")
        output = ceiling_for(
            **facts,
            figure="output",
            gpus=gpus,
            concurrency=row["conc"],
            context_tokens=row["isl"] + row["osl"],
        )
        assert not total.refuses(m["tput_per_gpu"]), (row, total.sentence)
        assert not output.refuses(m["output_tput_per_gpu"]), (row, output.sentence)
        highest = max(highest, m["tput_per_gpu"] / total.tok_s_per_gpu)
    assert highest < 0.5  # the fastest row uses under half the ceiling

    cookbook = json.loads(COOKBOOK.read_text())
    cells = [(c, point) for c in cookbook["configurations"] for point in c["points"]]
    assert cells
    for configuration, point in cells:
        total = ceiling_for(
            accelerator=configuration["accelerator"],
            model=cookbook["model"],
            weights=configuration["quantization"],
            figure="total",
        )
        assert not total.refuses(point["tokens_per_sec_per_gpu"]), configuration["id"]


@pytest.mark.parametrize(
    ("claim", "facts"),
    [
        (5e5, {"accelerator": "H200", "gpus": 1, "concurrency": 64}),  # 5e5 tok/s on one GPU
        (9e6, {"accelerator": "H200", "gpus": 1, "concurrency": 10}),  # 10 requests
        (1e308, {"accelerator": "B200", "gpus": 8, "concurrency": 256}),
        (float("inf"), {"accelerator": "B200", "gpus": 8}),
        (float("nan"), {"accelerator": "B200", "gpus": 8}),
    ],
)
def test_the_forged_figures_of_issue_53_are_above_it(claim, facts):
    bound = ceiling_for(model="DeepSeek-R1-0528", weights="FP8", figure="output", **facts)
    assert bound.refuses(claim)
    assert bound.sentence.startswith("DeepSeek-R1 on ")


def test_a_forged_run_on_one_h200_is_refused_by_memory_at_its_concurrency():
    """The run that ranked first: DeepSeek-R1-0528 on one H200. Its 671 GB of FP8 weights do
    not even fit in 141 GB; read at the concurrency it states, one GPU's HBM bounds it."""
    bound = ceiling_for(
        accelerator="H200",
        model="deepseek-ai/DeepSeek-R1-0528",
        weights="FP8",
        figure="output",
        gpus=1,
        concurrency=10,
        context_tokens=2000,
    )
    assert bound.limit == "memory"
    assert bound.tok_s_per_gpu == pytest.approx(10 * 4.8e12 / 37e9 * MARGIN)
    assert bound.refuses(9e6) and not bound.refuses(1000)


@pytest.mark.parametrize(
    ("label", "bits"),
    [
        ("FP8", 8),
        ("fp8 (e4m3, block)", 8),
        ("NVFP4", 4),
        ("MXFP4", 4),
        ("INT4 AWQ", 4),
        ("W4A16", 4),
        ("BF16", 16),
        ("FP16", 16),
        ("mystery", None),
        (None, None),
    ],
)
def test_a_quantization_label_is_read_by_its_names_rule(label, bits):
    assert format_bits(label) == bits


def test_the_compute_format_is_the_narrower_of_weights_and_activations():
    assert compute_format("W4A16", "BF16") == "bf16"  # 4-bit weights, 16-bit math
    assert compute_format("NVFP4", None) == "fp4"
    assert compute_format("FP8", "FP8") == "fp8"
    assert compute_format(None, None) == "fp4"  # unstated: the most the chip could do
    # A chip without FP4 runs it at FP8: the H200's datasheet has no FP4 column.
    h200 = ceiling_for(accelerator="H200", model="DeepSeek-R1", weights="FP4", figure="total")
    assert "at FP8" in h200.sentence


def test_an_unknown_model_or_accelerator_has_no_ceiling(tmp_path):
    assert (
        ceiling_for(accelerator="TPU-v9", model="DeepSeek-R1", weights="FP8", figure="total")
        is None
    )
    assert (
        ceiling_for(accelerator="B200", model="Unknown-1T", weights="FP8", figure="total") is None
    )
    # A worker install without the server's reference files has no datasheets at all.
    empty = shipped_specs(tmp_path)
    assert empty.chips == {} and empty.models == {}
