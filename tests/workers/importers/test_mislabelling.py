"""What importers used to store wrongly (issue 14), each pinned by a test.

Real files where the project has one (the aiperf/sglang llama-server run); vLLM and lm-eval
samples are built from those tools' sources (see test_vllm_lm_eval.py).
"""

from __future__ import annotations

import json

import pytest

from tests.workers.importers.files import fixture_path, read_json
from tests.workers.importers.test_vllm_lm_eval import lm_eval_results, vllm_result
from workers.importers import Facts, ImportFailure, import_file
from workers.importers.common import MissingFacts

SGLANG = "sglang-0.5.23/llama-server_c4_bench_serving.jsonl"
AIPERF = "aiperf-0.13.0/llama-server_completions_c4_profile_export_aiperf.json"


def _import(relative: str, facts: Facts, **kwargs):
    path = fixture_path(relative)
    return import_file(path.read_bytes(), path.name, facts=facts, **kwargs)


@pytest.fixture
def h100() -> Facts:
    return Facts.model_validate(
        {
            "deployment": {
                "accelerator": "H100",
                "gpus": 1,
                "engine": {"name": "vllm"},
                "quantization": {"weights": "BF16"},
            },
            "scenario": {"input_tokens": 1024, "output_tokens": 128},
        }
    )


def _vllm(result: dict, facts: Facts):
    return import_file(json.dumps(result).encode(), "vllm-result.json", facts=facts)


# --- load shape --------------------------------------------------------------------------


def test_an_aiperf_run_paced_by_its_concurrency_cap_is_closed_loop(llama_server):
    raw = read_json(AIPERF)
    [phase] = [p for p in raw["input_config"]["phases"] if p["kind"] == "profiling"]
    assert (phase["type"], phase["rate"], phase["concurrency"]) == ("constant", 200.0, 4)
    [doc] = _import(AIPERF, llama_server)
    point = doc.points[0]
    assert doc.scenario.arrival == "closed"
    assert point.request_rate is None
    assert point.concurrency == 4
    # The achieved rate is what the run did; the requested one is kept beside it.
    assert point.throughput.requests_per_s == raw["request_throughput"]["avg"]
    assert doc.environment.extra["requested_rate"] == 200.0


def test_aiperf_and_sglang_put_the_same_workload_in_the_same_scenario(llama_server):
    [from_aiperf] = _import(AIPERF, llama_server)
    [from_sglang] = _import(SGLANG, llama_server)
    shape = ("dataset", "arrival", "input_tokens", "output_tokens", "length_spread")
    assert [getattr(from_aiperf.scenario, k) for k in shape] == [
        getattr(from_sglang.scenario, k) for k in shape
    ]
    assert from_aiperf.scenario.dataset == "random"  # aiperf calls it "synthetic"


# --- nothing invented --------------------------------------------------------------------


def test_a_vllm_file_leaves_length_spread_and_prefix_cache_unstated(h100):
    # vLLM's result does not record random_range_ratio or any prefix reuse target.
    [doc] = _vllm(vllm_result(), h100)
    assert doc.scenario.length_spread is None
    assert doc.scenario.prefix_cache_hit_rate is None


def test_sglang_and_aiperf_state_the_spread_their_files_give(llama_server):
    [from_sglang] = _import(SGLANG, llama_server)  # random_range_ratio 1.0: fixed lengths
    [from_aiperf] = _import(AIPERF, llama_server)  # isl/osl stddev 0: fixed lengths
    assert from_sglang.scenario.length_spread == 0
    assert from_aiperf.scenario.length_spread == 0
    assert from_sglang.scenario.prefix_cache_hit_rate is None
    assert from_aiperf.scenario.prefix_cache_hit_rate is None


# --- counts and placeholders -------------------------------------------------------------


def test_sglang_completed_is_stored_as_the_succeeded_count(llama_server):
    raw = json.loads(fixture_path(SGLANG).read_text(), parse_constant=float)
    [doc] = _import(SGLANG, llama_server)
    requests = doc.points[0].requests
    assert requests is not None and requests.succeeded == raw["completed"]
    assert (requests.total, requests.failed) == (None, None)  # the line does not say


def test_a_fully_failed_vllm_run_stores_no_latency_figures(h100):
    zeros = {k: 0.0 for k in vllm_result() if k.endswith("_ms")}
    failed = vllm_result(
        completed=0, failed=100, request_throughput=0.0, output_throughput=0.0, **zeros
    )
    [doc] = _vllm(failed, h100)
    latency = doc.points[0].latency_ms
    assert doc.status == "failed"
    assert (latency.ttft, latency.tpot, latency.itl, latency.e2el) == (None, None, None, None)
    assert doc.points[0].requests.failed == 100


# --- speculative decoding ----------------------------------------------------------------

SPEC = {
    "spec_decode_acceptance_rate": 50.0,
    "spec_decode_acceptance_length": 2.8,
    "spec_decode_num_drafts": 5,
    "spec_decode_draft_tokens": 18,
    "spec_decode_accepted_tokens": 9,
    "spec_decode_per_position_acceptance_rates": [1.0, 0.6, 0.2],
}


def test_vllm_speculative_decoding_without_a_method_is_asked_with_the_other_facts(h100):
    with pytest.raises(MissingFacts) as alone:
        _vllm(vllm_result(**SPEC), h100)
    assert alone.value.missing == ["deployment.speculative.method"]
    assert "--spec-method METHOD" in str(alone.value)
    # With nothing given, the method is one of the facts of the one refusal, not a first one.
    with pytest.raises(MissingFacts) as everything:
        _vllm(vllm_result(**SPEC), Facts())
    assert everything.value.missing == [
        "deployment.accelerator",
        "deployment.gpus",
        "deployment.engine.name",
        "deployment.quantization.weights",
        "deployment.speculative.method",
    ]


def test_vllm_speculative_decoding_is_stored_with_its_acceptance(h100):
    tree = h100.as_tree()
    tree["deployment"]["speculative"] = {"method": "mtp"}
    given = Facts.model_validate(tree)
    [spec] = _vllm(vllm_result(**SPEC), given)
    [plain] = _vllm(vllm_result(), h100)
    assert spec.deployment.speculative.method == "mtp"
    assert spec.deployment.speculative.draft_tokens == 3  # one rate per draft position
    assert spec.deployment_fingerprint() != plain.deployment_fingerprint()
    acceptance = spec.points[0].speculative_acceptance
    assert acceptance.per_position == SPEC["spec_decode_per_position_acceptance_rates"]
    assert acceptance.rate == SPEC["spec_decode_acceptance_rate"] / 100  # vLLM writes percent
    assert acceptance.length == SPEC["spec_decode_acceptance_length"]
    assert acceptance.accepted_tokens == SPEC["spec_decode_accepted_tokens"]


# --- scores that are not proportions -----------------------------------------------------


def test_an_f1_score_is_stored_as_a_score_without_n_or_interval():
    raw = lm_eval_results()
    raw["results"]["drop"] = {"alias": "drop", "f1,none": 0.4125, "f1_stderr,none": 0.01}
    raw["n-samples"]["drop"] = {"original": 9536, "effective": 9536}
    facts = Facts.model_validate(
        {
            "deployment": {
                "accelerator": "MI355X",
                "gpus": 8,
                "engine": {"name": "sglang"},
                "quantization": {"weights": "MXFP4"},
            }
        }
    )
    [doc] = import_file(json.dumps(raw).encode(), "results.json", facts=facts)
    [f1] = [r for r in doc.accuracy if r.task == "drop"]
    assert (f1.kind, f1.score, f1.stderr) == ("score", 0.4125, 0.01)
    assert (f1.n, f1.correct, f1.ci_low, f1.ci_high) == (None, None, None, None)
    [em] = [r for r in doc.accuracy if r.metric == "exact_match,strict-match"]
    assert (em.kind, em.n) == ("proportion", 4)


# --- errors, in the order that helps -----------------------------------------------------


def test_a_truncated_file_says_truncated_before_anything_about_its_format():
    path = fixture_path(AIPERF)
    with pytest.raises(ImportFailure) as refused:
        import_file(path.read_bytes()[:500], path.name)
    assert "truncated" in str(refused.value)
    assert "cannot tell the format" not in str(refused.value)


def test_a_vllm_file_given_as_sglang_says_what_it_looks_like(h100):
    with pytest.raises(ImportFailure, match="looks like vllm-bench-serve") as refused:
        import_file(
            json.dumps(vllm_result(), indent=2).encode(),
            "result.json",
            facts=h100,
            format_name="sglang-bench-serving",
        )
    assert "truncated" not in str(refused.value)


def test_an_sglang_file_given_as_vllm_says_what_it_looks_like(llama_server):
    with pytest.raises(ImportFailure, match="looks like sglang-bench-serving") as refused:
        _import(SGLANG, llama_server, format_name="vllm-bench-serve")
    assert "Infinity" not in str(refused.value)


# --- formats refused before ---------------------------------------------------------------


def test_a_vllm_bench_sweep_run_file_keeps_its_integer_sweep_parameters(h100):
    swept = vllm_result(max_num_seqs=64, max_num_batched_tokens=2048, run_number=2)
    [doc] = _vllm(swept, h100)
    assert doc.environment.extra["sweep_parameters"] == {
        "max_num_seqs": 64,
        "max_num_batched_tokens": 2048,
        "run_number": 2,
    }


def test_an_integer_field_outside_a_sweep_is_still_refused_by_name(h100):
    with pytest.raises(ImportFailure, match="unknown field.*max_num_seqs"):
        _vllm(vllm_result(max_num_seqs=64), h100)


def test_inference_perf_lengths_and_send_duration_are_kept_not_dropped(h100):
    from tests.workers.importers.test_guidellm_inference_perf import inference_perf_report

    report = inference_perf_report()
    report["successes"]["prompt_len"] = report["successes"]["output_len"]
    given = Facts.model_validate({**h100.as_tree(), "model": "Qwen/Qwen3-8B"})
    [doc] = import_file(json.dumps(report).encode(), "stage_0_lifecycle_metrics.json", facts=given)
    kept = doc.environment.extra["not_mapped"]
    assert kept["load_summary.send_duration"] == report["load_summary"]["send_duration"]
    assert kept["successes.output_len"] == report["successes"]["output_len"]
    assert kept["successes.prompt_len"] == report["successes"]["prompt_len"]


def test_a_guidellm_0_3_report_is_refused_naming_its_version_and_layout(h100):
    old = {
        "benchmarks": [
            {
                "type_": "generative_benchmark",
                "args": {"strategy": {"type_": "concurrent", "streams": 4}},
                "run_stats": {"start_time": 1.0, "end_time": 2.0},
                "metrics": {},
            }
        ]
    }
    with pytest.raises(ImportFailure) as refused:
        import_file(json.dumps(old).encode(), "benchmarks.json", facts=h100, format_name="guidellm")
    message = str(refused.value)
    assert "guidellm 0.2/0.3" in message and "benchmarks[].args.strategy" in message
    assert "we read as of guidellm 0.5" in message
    assert "unknown strategy type" not in message


def test_a_genai_perf_export_is_read_in_its_flat_layout(h100):
    facts = Facts.model_validate({**h100.as_tree(), "scenario": {}})
    # genai-perf's flat input_config; fixed synthetic lengths (stddev 0) state the scenario.
    export = {
        "request_throughput": {"unit": "requests/sec", "avg": 9.86},
        "request_count": {"unit": "count", "avg": 100.0},
        "request_latency": {"unit": "ms", "avg": 101.2, "p50": 99.0, "p99": 140.0},
        "inter_token_latency": {"unit": "ms", "avg": 7.5, "p50": 7.1, "p25": 6.4},
        "input_config": {
            "model": ["gpt2"],
            "concurrency": 4,
            "request_rate": None,
            "prompt_source": "synthetic",
            "synthetic_input_tokens_mean": 128,
            "synthetic_input_tokens_stddev": 0,
            "output_tokens_mean": 64,
            "output_tokens_stddev": 0,
        },
    }
    [doc] = import_file(json.dumps(export).encode(), "profile_export_genai_perf.json", facts=facts)
    point = doc.points[0]
    assert (point.concurrency, point.requests.succeeded, point.requests.failed) == (4, 100, None)
    assert point.latency_ms.tpot.p50 == 7.1  # genai-perf's per-request ITL is our TPOT
    assert doc.environment.extra["percentiles_without_slot"]["inter_token_latency"] == {"p25": 6.4}
    assert (doc.scenario.input_tokens, doc.scenario.output_tokens) == (128, 64)
    assert (doc.scenario.length_spread, doc.scenario.dataset) == (0, "random")


def test_a_genai_perf_export_with_a_field_we_do_not_know_is_refused_by_name(h100):
    export = {
        "request_throughput": {"unit": "requests/sec", "avg": 9.86},
        "goodput": {"unit": "requests/sec", "avg": 9.0},
        "input_config": {"model": ["gpt2"], "concurrency": 1},
    }
    with pytest.raises(ImportFailure, match="unknown field.*goodput"):
        import_file(json.dumps(export).encode(), "profile_export_genai_perf.json", facts=h100)


def test_a_vllm_run_paced_by_its_concurrency_cap_is_closed_loop(h100):
    capped = vllm_result(request_rate=200.0, max_concurrency=1, request_throughput=1.37)
    [doc] = _vllm(capped, h100)
    assert doc.scenario.arrival == "closed"
    assert doc.points[0].request_rate is None
    assert doc.points[0].throughput.requests_per_s == 1.37  # achieved
    assert doc.environment.extra["requested_rate"] == 200.0  # requested, beside it


def test_a_vllm_run_that_kept_its_rate_stays_open_loop(h100):
    paced = vllm_result(request_rate=4.0, max_concurrency=64, request_throughput=3.9)
    [doc] = _vllm(paced, h100)
    assert doc.scenario.arrival == "open"
    assert doc.points[0].request_rate == 4.0


def test_an_array_of_inferencex_aggregates_makes_one_run_per_config():
    from tests.workers.importers.test_wild_corpus import WILD

    files = sorted((WILD / "inferencex-agg").glob("agg_kimik2.5_*.json"))
    rows = [json.loads(p.read_text()) for p in files]
    docs = import_file(json.dumps(rows).encode(), "agg_bmk.json")
    assert [d.points[0].concurrency for d in docs] == [r["conc"] for r in rows]
    assert [d.scenario.input_tokens for d in docs] == [r["isl"] for r in rows]
    assert len({d.idempotency_key for d in docs}) == len(rows)


def test_lm_eval_0_4_12_task_rows_with_name_and_sample_len_import():
    raw = lm_eval_results()
    raw["results"]["gsm8k"] |= {"name": "gsm8k", "sample_len": 1319}
    del raw["n-samples"]
    facts = Facts.model_validate(
        {
            "deployment": {
                "accelerator": "MI355X",
                "gpus": 8,
                "engine": {"name": "sglang"},
                "quantization": {"weights": "MXFP4"},
            }
        }
    )
    [doc] = import_file(json.dumps(raw).encode(), "results.json", facts=facts)
    strict = next(r for r in doc.accuracy if r.metric == "exact_match,strict-match")
    assert (strict.score, strict.n) == (0.75, 1319)  # n from sample_len


def test_a_plain_vllm_benchmark_serving_file_is_not_labelled_as_inferencex(h100):
    # nerdalert/vllm-bench-automation ran upstream vLLM's benchmark_serving.py; the layout is
    # the one InferenceX vendored, but the file is vLLM's and its label must say so.
    path = fixture_path("").parent / "wild/inferencex-benchmark-serving"
    path = path / "vllm-bench-automation_results.jsonl"
    docs = import_file(path.read_bytes(), path.name, facts=h100)
    assert docs
    for doc in docs:
        assert "vLLM" in doc.source.tool and "InferenceX" not in doc.source.tool
