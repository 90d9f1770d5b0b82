"""llmperf summaries and individual responses: refusals and the derived scenario.

Built from the real leaderboard files in tests/fixtures/wild (numbers are checked against
them in test_wild_corpus.py); each test changes one thing of a real file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from workers.importers import Facts, ImportFailure, import_file, sniff

WILD = Path(__file__).resolve().parents[2] / "fixtures" / "wild"
SUMMARY = WILD / "llmperf" / "llmperf-leaderboard_lepton_13b_summary.json"
RESPONSES = (
    WILD / "llmperf-responses" / "llmperf-leaderboard_anyscale_13b_individual_responses.json"
)


def _facts(**scenario: int) -> Facts:
    return Facts.model_validate(
        {
            "model": "meta-llama/Llama-2-13b-chat-hf",
            "deployment": {
                "accelerator": "H100",
                "gpus": 1,
                "engine": {"name": "vllm"},
                "quantization": {"weights": "BF16"},
            },
            "scenario": scenario,
        }
    )


def _summary(**changes: Any) -> bytes:
    row = json.loads(SUMMARY.read_text())
    row.update(changes)
    return json.dumps({k: v for k, v in row.items() if v is not None}).encode()


def test_it_reads_llmperf_summary_latencies_in_ms_and_http_error_codes():
    raw = json.loads(SUMMARY.read_text())
    [doc] = import_file(SUMMARY.read_bytes(), SUMMARY.name, facts=_facts())
    point = doc.points[0]
    assert point.latency_ms.ttft.p99 == raw["results_ttft_s_quantiles_p99"] * 1000
    assert point.errors == {"429": raw["results_number_errors"]}  # '{429.0: 130}'
    assert doc.status == "partial"


def test_it_refuses_an_llmperf_summary_of_another_results_version_by_name():
    with pytest.raises(ImportFailure) as refused:
        import_file(_summary(version="2025-01-01"), "s.json", facts=_facts())
    assert "llmperf summary of results version '2025-01-01'" in str(refused.value)
    assert "2023-08-31" in str(refused.value)


def test_it_refuses_llmperf_counts_that_do_not_add_up():
    with pytest.raises(ImportFailure, match="do not make the 150 started"):
        import_file(_summary(results_number_errors=1), "s.json", facts=_facts())


def test_it_refuses_an_unknown_llmperf_results_field():
    with pytest.raises(ImportFailure, match="unknown field results_goodput"):
        import_file(_summary(results_goodput=1.0), "s.json", facts=_facts())


def test_llmperf_metadata_strings_are_kept_and_other_unknown_fields_refused():
    [doc] = import_file(_summary(gpu="8xH100"), "s.json", facts=_facts())
    assert doc.environment.extra["metadata"]["gpu"] == "8xH100"
    with pytest.raises(ImportFailure, match="unknown field gpus"):
        import_file(_summary(gpus=8), "s.json", facts=_facts())


def test_an_llmperf_summary_with_no_completed_request_has_no_latency():
    # pandas writes NaN for statistics over no request: not measurements.
    data = _summary(
        results_num_completed_requests=0,
        results_number_errors=150,
        results_ttft_s_mean=float("nan"),
    )
    [doc] = import_file(data, "s.json", facts=_facts())
    assert doc.status == "failed" and doc.points[0].latency_ms.ttft is None


def test_llmperf_responses_derive_the_scenario_lengths_and_say_so():
    raw = json.loads(RESPONSES.read_text())
    assert sniff(RESPONSES.read_bytes(), RESPONSES.name) == "llmperf-responses"
    [doc] = import_file(RESPONSES.read_bytes(), RESPONSES.name, facts=_facts())
    mean_out = sum(r["number_output_tokens"] for r in raw) / len(raw)
    assert doc.scenario.output_tokens == round(mean_out)
    assert doc.environment.extra["scenario_lengths"]["means"]["output_tokens"] == mean_out
    assert doc.scenario.length_spread is None  # measured counts state no spread


def test_given_lengths_replace_the_derived_ones_for_llmperf_responses():
    facts = _facts(input_tokens=550, output_tokens=150)
    [doc] = import_file(RESPONSES.read_bytes(), RESPONSES.name, facts=facts)
    assert (doc.scenario.input_tokens, doc.scenario.output_tokens) == (550, 150)
    assert "scenario_lengths" not in doc.environment.extra


def test_llmperf_responses_need_the_model_named():
    facts = _facts().model_copy(update={"model": None})
    with pytest.raises(ImportFailure, match="give --model"):
        import_file(RESPONSES.read_bytes(), RESPONSES.name, facts=facts)


def test_an_unknown_field_in_an_llmperf_response_is_refused():
    raw = json.loads(RESPONSES.read_text())
    raw[3]["queue_s"] = 0.5
    with pytest.raises(ImportFailure, match=r"\[3\]: unknown field\(s\) queue_s"):
        import_file(json.dumps(raw).encode(), RESPONSES.name, facts=_facts())


SWEEP = (
    WILD / "llmperf-sweep" / "llmperf-bench_tgi-2.0.1_meta-llama_Meta-Llama-3-8B-Instruct_tp_1"
    "_results.json"
)


def test_summaries_keyed_by_concurrency_are_one_run_with_a_point_each():
    keyed = json.loads(SWEEP.read_text())
    assert sniff(SWEEP.read_bytes(), SWEEP.name) == "llmperf-sweep"
    [doc] = import_file(SWEEP.read_bytes(), SWEEP.name, facts=_facts())
    assert [p.concurrency for p in doc.points] == [int(k) for k in keyed]
    assert doc.source.tool.endswith("keyed by concurrency")


def test_a_key_that_is_not_its_summarys_concurrency_is_refused_naming_it():
    keyed = json.loads(SWEEP.read_text())
    keyed["3"] = keyed.pop("4")  # num_concurrent_requests stays 4
    with pytest.raises(ImportFailure, match=r"\['3'\]: num_concurrent_requests is 4"):
        import_file(json.dumps(keyed).encode(), SWEEP.name, facts=_facts())


def test_a_keyed_summary_of_another_version_names_the_version_not_none():
    keyed = json.loads(SWEEP.read_text())
    keyed["2"]["version"] = "2024-01-01"
    with pytest.raises(ImportFailure, match="results version '2024-01-01'"):
        import_file(json.dumps(keyed).encode(), SWEEP.name, facts=_facts())
