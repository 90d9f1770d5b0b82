"""trtllm-bench reports: what the reader does where a report states less than the real ones.

Each case starts from a real report in tests/fixtures/wild/trtllm-bench and changes the
fields it is about, so every case is that report with one thing different (said in each test);
the real reports themselves are checked figure by figure in test_wild_corpus.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from workers.importers import Facts, ImportFailure, import_file
from workers.importers.common import MissingFacts

REAL = (
    Path(__file__).resolve().parents[2]
    / "fixtures"
    / "wild"
    / "trtllm-bench"
    / "masahiro-kubota-trtllm-latency_rtx4070ti_qwen25-0.5b_in87_out40_bs1.json"
)


def _report() -> dict[str, Any]:
    return copy.deepcopy(json.loads(REAL.read_text()))


def _import(report: dict[str, Any], facts: Facts | None = None) -> Any:
    [doc] = import_file(json.dumps(report).encode(), "report.json", facts=facts)
    return doc


def test_it_derives_lengths_from_the_measured_means_when_the_dataset_lengths_vary():
    report = _report()
    report["dataset"]["isl_stats"].update(minimum=80.0, maximum=95.0)
    report["dataset"]["osl_stats"].update(minimum=12.0, maximum=40.0)
    report["request_info"].update(avg_input_length=87.4, avg_output_length=31.6)
    doc = _import(report)
    assert (doc.scenario.input_tokens, doc.scenario.output_tokens) == (87, 32)
    assert doc.scenario.length_spread is None  # the lengths vary by an amount not stated
    derived = doc.environment.extra["scenario_lengths"]
    assert derived["means"] == {"input_tokens": 87.4, "output_tokens": 31.6}
    assert derived["requests"] == report["request_info"]["num_requests"]
    assert "avg_input_length" in derived["derived"]


def test_a_length_the_facts_give_wins_over_a_derived_one():
    report = _report()
    report["dataset"]["osl_stats"].update(minimum=12.0, maximum=40.0)
    report["request_info"]["avg_output_length"] = 31.6
    doc = _import(report, Facts.model_validate({"scenario": {"output_tokens": 40}}))
    assert doc.scenario.output_tokens == 40
    assert doc.scenario.input_tokens == 87  # the dataset's fixed length, still stated


def test_a_report_without_gpu_details_asks_for_the_accelerator_and_nothing_else():
    report = _report()
    report["machine"] = None  # reporting.py writes null when CUDA cannot be queried
    with pytest.raises(MissingFacts) as refusal:
        _import(report)
    assert refusal.value.missing == ["deployment.accelerator"]
    doc = _import(report, Facts.model_validate({"deployment": {"accelerator": "H100"}}))
    assert doc.deployment.accelerator == "H100"


def test_a_quantized_checkpoint_stores_its_quantization_as_the_weights():
    report = _report()
    report["engine"].update(quantization="NVFP4", kv_cache_dtype="FP8")
    doc = _import(report)
    assert doc.deployment.quantization.weights == "NVFP4"
    assert doc.deployment.quantization.kv_cache == "FP8"
    assert "weights_from" not in doc.environment.extra


def test_a_world_of_several_gpus_is_the_deployment_and_disagreeing_facts_are_refused():
    report = _report()
    report["world_info"].update(tp_size=4, pp_size=2, world_size=8)
    doc = _import(report)
    assert doc.deployment.gpus == 8
    assert (doc.deployment.parallelism.tp, doc.deployment.parallelism.pp) == (4, 2)
    with pytest.raises(ImportFailure, match="deployment.gpus: the file says 8"):
        _import(report, Facts.model_validate({"deployment": {"gpus": 4}}))


def test_a_section_the_reader_does_not_know_is_refused_by_name():
    report = _report()
    report["energy"] = {"total_energy_j": 56.1}
    with pytest.raises(ImportFailure, match="unknown field.*energy"):
        _import(report)


def test_an_unknown_dtype_of_an_unquantized_checkpoint_is_refused_not_guessed():
    report = _report()
    report["engine"]["dtype"] = "int8"
    with pytest.raises(ImportFailure, match="engine.dtype 'int8'"):
        _import(report)
