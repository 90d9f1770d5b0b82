"""Facts a file states by what it measured are derived, labelled, and never asked (issue 43).

Real files from the wild corpus (sources in tests/fixtures/wild/SOURCES.md); expected values
are computed from each file's own fields.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from workers.importers import Facts, ImportFailure, import_file
from workers.importers.common import MissingFacts

WILD = Path(__file__).resolve().parents[2] / "fixtures" / "wild"
MULTI_NODE = (
    WILD / "inferencex-benchmark-serving" / "gpt-oss-120b_concurrency_256_req_rate_inf_gpus_16"
    "_ctx_8_gen_8.json"
)
APPENDED = WILD / "inferencex-benchmark-serving" / "vllm-bench-automation_results.jsonl"
ATOM = WILD / "inferencex-benchmark-serving" / "atom_mtp_tp4_conc64_isl8192_osl1024.json"


def _deployment(**scenario: int) -> Facts:
    return Facts.model_validate(
        {
            "deployment": {
                "accelerator": "B200",
                "gpus": 16,
                "engine": {"name": "vllm"},
                "quantization": {"weights": "FP4"},
            },
            "scenario": scenario,
        }
    )


def test_it_derives_the_lengths_from_totals_that_divide_exactly():
    raw = json.loads(MULTI_NODE.read_text())
    assert raw["total_input_tokens"] % raw["completed"] == 0
    [doc] = import_file(MULTI_NODE.read_bytes(), MULTI_NODE.name, facts=_deployment())
    assert doc.scenario.input_tokens == raw["total_input_tokens"] // raw["completed"]
    assert doc.scenario.output_tokens == raw["total_output_tokens"] // raw["completed"]
    derived = doc.environment.extra["scenario_lengths"]
    assert "divide exactly" in derived["derived"]
    assert derived["requests"] == raw["completed"]


def test_it_asks_only_for_the_length_whose_total_does_not_divide():
    first = json.loads(APPENDED.read_text().splitlines()[0])
    assert first["total_input_tokens"] % first["completed"] == 0
    assert first["total_output_tokens"] % first["completed"] != 0
    with pytest.raises(MissingFacts) as refused:
        import_file(APPENDED.read_bytes(), APPENDED.name, facts=_deployment())
    assert refused.value.missing == ["scenario.output_tokens"]
    docs = import_file(APPENDED.read_bytes(), APPENDED.name, facts=_deployment(output_tokens=500))
    assert docs[0].scenario.input_tokens == first["total_input_tokens"] // first["completed"]
    assert docs[0].scenario.output_tokens == 500
    assert set(docs[0].environment.extra["scenario_lengths"]["means"]) == {"input_tokens"}


def test_it_derives_the_lengths_from_every_requests_lengths():
    raw = json.loads(ATOM.read_text())
    assert raw["completed"] == len(raw["input_lens"])  # no errors array: all completed
    [doc] = import_file(ATOM.read_bytes(), ATOM.name, facts=_deployment())
    mean_in = sum(raw["input_lens"]) / len(raw["input_lens"])
    mean_out = sum(raw["output_lens"]) / len(raw["output_lens"])
    assert (doc.scenario.input_tokens, doc.scenario.output_tokens) == (
        round(mean_in),
        round(mean_out),
    )
    derived = doc.environment.extra["scenario_lengths"]
    assert derived["means"] == {"input_tokens": mean_in, "output_tokens": mean_out}
    assert "input_lens" in derived["derived"]


def test_a_given_length_replaces_the_derived_one_and_leaves_the_other():
    raw = json.loads(MULTI_NODE.read_text())
    facts = _deployment(input_tokens=1000)
    [doc] = import_file(MULTI_NODE.read_bytes(), MULTI_NODE.name, facts=facts)
    assert doc.scenario.input_tokens == 1000
    assert doc.scenario.output_tokens == raw["total_output_tokens"] // raw["completed"]
    assert set(doc.environment.extra["scenario_lengths"]["means"]) == {"output_tokens"}


LM_EVAL = WILD / "lm-eval"
QWEN3 = LM_EVAL / "qwen3-8b_negotiationtom_results_2026-07-08T16-04-34.219874.json"
NL2FOAM = LM_EVAL / "nl2foam_results_2025-12-17T20-24-58.608862.json"


def test_an_lm_eval_file_states_its_gpu_backend_and_dtype_and_asks_nothing():
    raw = json.loads(QWEN3.read_text())
    assert re.findall(r"GPU \d+: (.+)", raw["pretty_env_info"]) == ["NVIDIA H100 80GB HBM3"]
    [doc] = import_file(QWEN3.read_bytes(), QWEN3.name, facts=Facts())
    deployment = doc.deployment
    assert deployment.accelerator == "H100"  # 'GPU 0: NVIDIA H100 80GB HBM3'
    assert deployment.gpus == 1  # the machine lists one GPU
    assert deployment.engine.name == raw["config"]["model"] == "hf"
    assert deployment.quantization.weights == "BF16"  # model_args dtype bfloat16
    derived = doc.environment.extra["deployment_derived"]
    assert set(derived) == {"accelerator", "gpus", "engine", "weights"}


def test_an_lm_eval_file_without_a_dtype_asks_only_for_the_weights():
    raw = json.loads(NL2FOAM.read_text())
    assert "dtype" not in raw["config"]["model_args"]
    with pytest.raises(MissingFacts) as refused:
        import_file(NL2FOAM.read_bytes(), NL2FOAM.name, facts=Facts())
    assert refused.value.missing == ["deployment.quantization.weights"]
    given = Facts.model_validate({"deployment": {"quantization": {"weights": "BF16"}}})
    [doc] = import_file(NL2FOAM.read_bytes(), NL2FOAM.name, facts=given)
    tp = raw["config"]["model_args"]["tensor_parallel_size"]
    assert (doc.deployment.gpus, doc.deployment.engine.name) == (tp, "vllm")


def test_a_quantized_models_compute_dtype_is_not_read_as_its_weights():
    raw = json.loads(QWEN3.read_text())
    raw["config"]["model_args"]["pretrained"] = "Qwen/Qwen3-8B-FP8"
    with pytest.raises(MissingFacts) as refused:
        import_file(json.dumps(raw).encode(), QWEN3.name, facts=Facts())
    assert refused.value.missing == ["deployment.quantization.weights"]


def test_a_fact_the_file_states_otherwise_is_a_conflict_naming_it():
    given = Facts.model_validate({"deployment": {"accelerator": "A100"}})
    with pytest.raises(ImportFailure, match="deployment.accelerator: the file says 'H100'"):
        import_file(QWEN3.read_bytes(), QWEN3.name, facts=given)
