"""vLLM benchmark_serving.py results of 2024: refusals and the derived scenario.

Built from the real LambdaLabsML/vllm-benchmark files in tests/fixtures/wild (numbers are
checked against them in test_wild_corpus.py); each test changes one thing of a real file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from workers.importers import Facts, ImportFailure, import_file, sniff

WILD = Path(__file__).resolve().parents[2] / "fixtures" / "wild" / "vllm-benchmark-serving"
MISTRAL = WILD / "lambdalabs_1xA100_Mistral-7B-Instruct-v0.3_tp1_len2000.json"


def _facts(**scenario: int) -> Facts:
    return Facts.model_validate(
        {
            "deployment": {
                "accelerator": "A100",
                "gpus": 1,
                "engine": {"name": "vllm"},
                "quantization": {"weights": "BF16"},
            },
            "scenario": scenario,
        }
    )


def _changed(**changes: Any) -> bytes:
    row = json.loads(MISTRAL.read_text())
    row.update(changes)
    return json.dumps({k: v for k, v in row.items() if v is not None}).encode()


def test_a_2024_result_is_sniffed_as_its_own_format_not_as_the_vendored_client():
    # best_of marks InferenceX's vendored client too; input_throughput and
    # *_latency_ms mark the 2024 script, which that reader refused by name.
    assert sniff(MISTRAL.read_bytes(), MISTRAL.name) == "vllm-benchmark-serving"
    data = _changed(input_throughput=None)
    assert sniff(data, MISTRAL.name) == "vllm-benchmark-serving"  # *_latency_ms alone


def test_request_latency_is_the_end_to_end_time_in_ms():
    raw = json.loads(MISTRAL.read_text())
    [doc] = import_file(MISTRAL.read_bytes(), MISTRAL.name, facts=_facts())
    assert doc.points[0].latency_ms.e2el.p99 == raw["p99_latency_ms"]
    assert doc.source.tool.startswith("vLLM benchmarks/benchmark_serving.py, 2024")


def test_a_success_with_no_output_tokens_still_counts_in_the_derived_length():
    raw = json.loads(MISTRAL.read_text())
    assert 0 in raw["output_lens"] and raw["errors"][raw["output_lens"].index(0)] == ""
    [doc] = import_file(MISTRAL.read_bytes(), MISTRAL.name, facts=_facts())
    assert doc.scenario.output_tokens == round(sum(raw["output_lens"]) / len(raw["output_lens"]))


def test_a_failed_request_is_left_out_of_the_derived_lengths():
    raw = json.loads(MISTRAL.read_text())
    errors = ["", "boom", *raw["errors"][2:]]
    data = _changed(errors=errors, completed=raw["completed"] - 1)
    [doc] = import_file(data, MISTRAL.name, facts=_facts())
    kept = [n for n, e in zip(raw["input_lens"], errors, strict=True) if not e]
    assert doc.environment.extra["scenario_lengths"]["means"]["input_tokens"] == (
        sum(kept) / len(kept)
    )
    assert doc.points[0].requests.failed == 1 and doc.status == "partial"


def test_given_lengths_replace_the_derived_ones():
    facts = _facts(input_tokens=200, output_tokens=250)
    [doc] = import_file(MISTRAL.read_bytes(), MISTRAL.name, facts=facts)
    assert (doc.scenario.input_tokens, doc.scenario.output_tokens) == (200, 250)
    assert "scenario_lengths" not in doc.environment.extra


def test_an_unknown_field_is_refused():
    with pytest.raises(ImportFailure, match=r"unknown field\(s\) request_inthroughput"):
        import_file(_changed(request_inthroughput=1.0), MISTRAL.name, facts=_facts())


def test_completed_that_disagrees_with_the_errors_array_is_refused():
    with pytest.raises(ImportFailure, match="completed is 9 but the errors array has 10"):
        import_file(_changed(completed=9), MISTRAL.name, facts=_facts())
