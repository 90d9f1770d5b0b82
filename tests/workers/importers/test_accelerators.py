"""Accelerator names are stored as the catalog's SKU, whoever spelled them (issue 43)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from workers import accelerator_specs
from workers.importers import Facts, import_file
from workers.importers.accelerators import accelerator_sku, known_skus, runner_sku

ROOT = Path(__file__).resolve().parents[3]
WILD = ROOT / "tests" / "fixtures" / "wild"


@pytest.mark.parametrize(
    ("written", "sku"),
    [
        ("b200-dgxc", "B200"),
        ("B200-DGXC-SLURM", "B200"),
        ("cluster:mi355x-amds", "MI355X"),
        ("NVIDIA B200", "B200"),
        ("AMD Instinct MI300X", "MI300X"),
        ("NVIDIA H100 80GB HBM3", "H100"),
        ("NVIDIA A100-SXM4-80GB", "A100"),
        ("NVIDIA GeForce RTX 5090", "RTX 5090"),
        ("NVIDIA_L40S", "L40S"),
        ("gb200", "GB200"),  # never read as B200
        ("h200", "H200"),
        # A board variant that is another part keeps its word after the SKU.
        ("NVIDIA H100 PCIe", "H100 PCIe"),
        # Unknown names are kept as written: guessing would merge boards that differ.
        ("ARC-B60", "ARC-B60"),
        ("Ascend 910B", "Ascend 910B"),
        ("CPU", "CPU"),
    ],
)
def test_it_names_the_sku_of_each_spelling(written, sku):
    assert accelerator_sku(written) == sku


def test_a_runner_pool_names_its_sku_even_when_the_sku_is_not_known_here():
    assert runner_sku("b200-trt") == "B200"
    assert runner_sku("mi300a-lab") == "MI300A"
    assert runner_sku("x9000-site") == "X9000"


def test_every_catalog_accelerator_is_known_by_its_own_sku():
    catalog = accelerator_specs.skus()
    assert catalog and set(catalog) <= set(known_skus())
    assert all(accelerator_sku(sku) == sku for sku in catalog)


def test_the_gpu_a_file_reports_is_stored_as_its_sku_with_the_name_kept():
    path = WILD / "lm-eval" / "qwen3-8b_negotiationtom_results_2026-07-08T16-04-34.219874.json"
    reported = re.search(r"GPU 0: ([^\n]+)", json.loads(path.read_text())["pretty_env_info"])[1]
    assert reported == "NVIDIA H100 80GB HBM3"  # as the driver names it
    facts = Facts.model_validate(
        {
            "deployment": {
                "accelerator": reported,
                "gpus": 1,
                "engine": {"name": "hf"},
                "quantization": {"weights": "BF16"},
            }
        }
    )
    [doc] = import_file(path.read_bytes(), path.name, facts=facts)
    assert doc.deployment.accelerator == "H100"
    assert doc.environment.extra["accelerator_as_written"] == reported


def test_a_vendor_spelling_given_for_a_runner_named_file_is_no_conflict():
    path = next((WILD / "inferencex-agentic").glob("*b200-dgxc-slurm_5.json"))
    facts = Facts.model_validate({"deployment": {"accelerator": "NVIDIA B200"}})
    [doc] = import_file(path.read_bytes(), path.name, facts=facts)
    assert doc.deployment.accelerator == "B200"
