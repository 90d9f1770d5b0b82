"""A deployment has one accelerator: pools on different ones are refused by name (issue 59)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workers.importers import ImportFailure, import_file
from workers.importers.accelerators import one_accelerator

WILD = Path(__file__).resolve().parents[2] / "fixtures" / "wild"
AGG = next((WILD / "inferencex-agg").glob("agg_kimik2.5_1k1k_*.json"))


def _with_pools(prefill: str, decode: str) -> bytes:
    # A real aggregate row given the pools' hardware InferenceX's process_result.py writes
    # for heterogeneous disaggregated configs (prefill_hw / decode_hw, since #2100): no
    # published file carries them yet, so the real row is modified here, and says so.
    row = json.loads(AGG.read_text())
    row.update(prefill_hw=prefill, decode_hw=decode)
    return json.dumps(row).encode()


def test_a_gh200_prefill_pool_feeding_an_a100_decode_pool_is_refused_by_name():
    with pytest.raises(ImportFailure) as refused:
        import_file(_with_pools("gh200", "a100"), AGG.name)
    message = str(refused.value)
    assert "mixed-accelerator deployment (prefill on GH200, decode on A100)" in message
    assert "a deployment here has one accelerator" in message
    assert "unknown field" not in message  # the reason, not the keys it came with


def test_pools_on_one_accelerator_are_not_a_mix():
    assert one_accelerator({"prefill": "b200-dgxc", "decode": "B200"}, "f") == "B200"
    # The row is still judged as before by everything else (its pools are not read here).
    with pytest.raises(ImportFailure, match="unknown field"):
        import_file(_with_pools("mi355x", "mi355x"), AGG.name)
