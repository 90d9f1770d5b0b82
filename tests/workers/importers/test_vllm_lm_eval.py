"""Formats without a real file here: samples built from each tool's source.

vLLM: keys as written by `main_async` and `benchmark` in vllm/benchmarks/serve.py
(vllm-project/vllm, the 0.11-0.13 series): setup keys, `*_ms` statistics from
`process_one_metric` (p{int}_ for whole percentiles), and the --save-detailed arrays whose
ttfts/itls are perf_counter differences in seconds.

lm-eval: `results_<timestamp>.json` and `samples_<task>_<timestamp>.jsonl` as written by
lm_eval/loggers/evaluation_tracker.py in lm-evaluation-harness 0.4.x.
"""

from __future__ import annotations

import json

import pytest

from workers.importers import Facts, ImportFailure, import_file


def vllm_result(**overrides) -> dict:
    result = {
        "date": "20251101-120000",
        "endpoint_type": "openai",
        "backend": "openai",
        "label": None,
        "model_id": "Qwen/Qwen3-8B",
        "tokenizer_id": "Qwen/Qwen3-8B",
        "num_prompts": 100,
        "request_rate": "inf",
        "burstiness": 1.0,
        "max_concurrency": 8,
        "duration": 20.5,
        "completed": 99,
        "failed": 1,
        "total_input_tokens": 101376,
        "total_output_tokens": 12672,
        "request_throughput": 4.829268292682927,
        "request_goodput": None,
        "output_throughput": 618.1463414634146,
        "total_token_throughput": 5563.317073170731,
        "max_output_tokens_per_s": 700.0,
        "max_concurrent_requests": 8,
        "mean_ttft_ms": 120.5,
        "median_ttft_ms": 110.25,
        "std_ttft_ms": 30.0,
        "p99_ttft_ms": 250.75,
        "mean_tpot_ms": 12.5,
        "median_tpot_ms": 12.25,
        "std_tpot_ms": 1.0,
        "p99_tpot_ms": 15.5,
        "mean_itl_ms": 12.4,
        "median_itl_ms": 12.0,
        "std_itl_ms": 2.0,
        "p99_itl_ms": 20.0,
    }
    result.update(overrides)
    return result


@pytest.fixture
def facts() -> Facts:
    return Facts.model_validate(
        {
            "deployment": {
                "accelerator": "H100",
                "gpus": 1,
                "engine": {"name": "vllm", "version": "0.11.0"},
                "quantization": {"weights": "BF16"},
            },
            "scenario": {"input_tokens": 1024, "output_tokens": 128},
        }
    )


def _vllm(result: dict, facts: Facts):
    return import_file(json.dumps(result).encode(), "openai-infqps-concurrency8.json", facts=facts)


def test_it_reads_vllm_millisecond_keys_as_milliseconds(facts):
    raw = vllm_result()
    [doc] = _vllm(raw, facts)
    point = doc.points[0]
    assert point.latency_ms.ttft.mean == raw["mean_ttft_ms"]
    assert point.latency_ms.ttft.p50 == raw["median_ttft_ms"]
    assert point.latency_ms.ttft.p99 == raw["p99_ttft_ms"]
    assert point.latency_ms.tpot.p50 == raw["median_tpot_ms"]
    assert point.latency_ms.itl.std == raw["std_itl_ms"]
    assert point.throughput.output_tok_s == raw["output_throughput"]
    assert point.throughput.total_tok_s == raw["total_token_throughput"]
    assert point.requests.model_dump() == {"total": 100, "succeeded": 99, "failed": 1}
    assert doc.status == "partial"
    assert doc.deployment.engine.version == "0.11.0"
    assert doc.source.tool.startswith("vllm bench serve")


def test_it_keeps_vllm_percentiles_the_schema_has_no_slot_for(facts):
    [doc] = _vllm(vllm_result(p25_ttft_ms=90.0, **{"p99.9_ttft_ms": 300.0}), facts)
    assert doc.points[0].latency_ms.ttft.p999 == 300.0
    assert doc.environment.extra["latency_stats_without_slot_ms"] == {"p25_ttft_ms": 90.0}


def test_it_takes_vllm_request_counts_from_the_detailed_arrays(facts):
    raw = vllm_result(
        num_prompts=3,
        completed=2,
        failed=1,
        input_lens=[1024, 1024, 1024],
        output_lens=[128, 128, 0],
        ttfts=[0.1, 0.2, 0.0],
        itls=[[0.01] * 127, [0.02] * 127, []],
        generated_texts=["", "", ""],
        errors=["", "", "ClientConnectorError"],
    )
    [doc] = _vllm(raw, facts)
    point = doc.points[0]
    assert point.requests.model_dump() == {"total": 3, "succeeded": 2, "failed": 1}
    assert point.records is None  # no start_times: a record needs its send time
    assert "records_omitted" in doc.environment.extra


def test_it_builds_vllm_records_in_milliseconds_when_send_times_exist(facts):
    raw = vllm_result(
        num_prompts=2,
        completed=1,
        failed=1,
        start_times=[100.0, 100.5],
        input_lens=[1024, 1024],
        output_lens=[3, 0],
        ttfts=[0.25, 0.0],
        itls=[[0.5, 0.25], []],
        generated_texts=["abc", ""],
        errors=["", "boom"],
    )
    [doc] = _vllm(raw, facts)
    ok, failed = doc.points[0].records
    assert (ok.t_send_ms, ok.ttft_ms, ok.e2el_ms, ok.tpot_ms) == (0.0, 250.0, 1000.0, 375.0)
    assert (ok.n_in, ok.n_out, ok.status) == (1024, 3, "ok")
    assert (failed.t_send_ms, failed.status, failed.error) == (500.0, "other", "boom")


def test_it_refuses_detailed_arrays_of_different_lengths(facts):
    raw = vllm_result(input_lens=[1], output_lens=[1, 2], ttfts=[0.1], itls=[[]], errors=[""])
    with pytest.raises(ImportFailure, match="differ in length"):
        _vllm(raw, facts)


def test_it_names_an_unknown_vllm_field(facts):
    with pytest.raises(ImportFailure, match="unknown field.*queue_depth"):
        _vllm(vllm_result(queue_depth=3), facts)


def test_it_reads_a_vllm_open_loop_rate(facts):
    [doc] = _vllm(vllm_result(request_rate=4.0), facts)
    assert doc.points[0].request_rate == 4.0
    assert doc.scenario.arrival == "open"


def lm_eval_results() -> dict:
    return {
        "results": {
            "gsm8k": {
                "alias": "gsm8k",
                "exact_match,strict-match": 0.75,
                "exact_match_stderr,strict-match": 0.25,
                "exact_match,flexible-extract": 1.0,
                "exact_match_stderr,flexible-extract": "N/A",
            }
        },
        "group_subtasks": {"gsm8k": []},
        "configs": {"gsm8k": {"task": "gsm8k", "num_fewshot": 5}},
        "versions": {"gsm8k": 3.0},
        "n-shot": {"gsm8k": 5},
        "higher_is_better": {"gsm8k": {"exact_match": True}},
        "n-samples": {"gsm8k": {"original": 1319, "effective": 4}},
        "config": {
            "model": "local-completions",
            "model_args": "model=Qwen/Qwen3-8B,base_url=http://127.0.0.1:8000/v1/completions",
            "batch_size": 1,
            "limit": 4.0,
            "gen_kwargs": None,
        },
        "git_hash": "abc1234",
        "date": 1730000000.0,
        "task_hashes": {"gsm8k": "d1f0"},
        "model_source": "local-completions",
        "model_name": "Qwen/Qwen3-8B",
        "start_time": 1.0,
        "end_time": 2.0,
        "total_evaluation_time_seconds": "1.0",
    }


def lm_eval_samples() -> bytes:
    lines = []
    for doc_id, (strict, flexible) in enumerate([(1, 1), (1, 1), (0, 1), (1, 1)]):
        for filter_name, value in (("strict-match", strict), ("flexible-extract", flexible)):
            lines.append(
                {
                    "doc_id": doc_id,
                    "doc": {"question": "q", "answer": "#### 4"},
                    "target": "4",
                    "arguments": {"gen_args_0": {"arg_0": "prompt", "arg_1": {}}},
                    "resps": [["... #### 4"]],
                    "filtered_resps": ["4" if value else "[invalid]"],
                    "filter": filter_name,
                    "metrics": ["exact_match"],
                    "doc_hash": "h",
                    "prompt_hash": "p",
                    "target_hash": "t",
                    "exact_match": float(value),
                }
            )
    return "\n".join(json.dumps(line) for line in lines).encode()


@pytest.fixture
def eval_facts() -> Facts:
    return Facts.model_validate(
        {
            "deployment": {
                "accelerator": "MI355X",
                "gpus": 8,
                "engine": {"name": "sglang"},
                "quantization": {"weights": "MXFP4"},
            }
        }
    )


def test_it_imports_lm_eval_scores_per_filter(eval_facts):
    raw = lm_eval_results()
    [doc] = import_file(
        json.dumps(raw).encode(), "results_2025-11-01T12-00-00.json", facts=eval_facts
    )
    by_metric = {a.metric: a for a in doc.accuracy}
    strict = by_metric["exact_match,strict-match"]
    assert strict.score == 0.75 and strict.stderr == 0.25 and strict.n == 4
    assert strict.protocol == "lm-eval/gsm8k@v3.0/5-shot"
    assert strict.data_hash == "d1f0"
    assert by_metric["exact_match,flexible-extract"].stderr is None  # "N/A"
    assert doc.model.name == "Qwen/Qwen3-8B"
    assert doc.points == []


def test_it_attaches_lm_eval_samples_as_items_for_paired_comparisons(eval_facts):
    raw = lm_eval_results()
    [doc] = import_file(
        json.dumps(raw).encode(),
        "results_2025-11-01T12-00-00.json",
        facts=eval_facts,
        companions=[(lm_eval_samples(), "samples_gsm8k_2025-11-01T12-00-00.jsonl")],
    )
    strict = next(a for a in doc.accuracy if a.metric == "exact_match,strict-match")
    assert [i.item_id for i in strict.items] == ["0", "1", "2", "3"]
    assert [i.correct for i in strict.items] == [True, True, False, True]
    assert strict.items[2].extracted == "[invalid]" and strict.items[2].gold == "4"
    assert strict.correct == 3


def test_it_refuses_samples_of_a_task_the_results_do_not_have(eval_facts):
    with pytest.raises(ImportFailure, match="arc_easy"):
        import_file(
            json.dumps(lm_eval_results()).encode(),
            "results.json",
            facts=eval_facts,
            companions=[(lm_eval_samples(), "samples_arc_easy_2025-11-01T12-00-00.jsonl")],
        )


def test_it_stores_lm_eval_perplexity_as_a_score_not_a_proportion(eval_facts):
    raw = lm_eval_results()
    raw["results"]["wikitext"] = {"alias": "wikitext", "word_perplexity,none": 12.5}
    [doc] = import_file(json.dumps(raw).encode(), "results.json", facts=eval_facts)
    [ppl] = [r for r in doc.accuracy if r.task == "wikitext"]
    assert (ppl.kind, ppl.score, ppl.n) == ("score", 12.5, None)


def test_a_vllm_run_does_not_claim_a_dataset_the_file_does_not_name(facts):
    [doc] = _vllm(vllm_result(), facts)
    assert doc.scenario.dataset == "unstated"


def test_it_sniffs_lm_eval_results_and_samples():
    from workers.importers import sniff

    assert sniff(json.dumps(lm_eval_results()).encode(), "results.json") == "lm-eval"
    assert sniff(lm_eval_samples(), "samples_gsm8k_x.jsonl") == "lm-eval-samples"


def test_lm_eval_samples_alone_are_sent_back_with_directions(eval_facts):
    with pytest.raises(ImportFailure, match="--records"):
        import_file(lm_eval_samples(), "samples_gsm8k_2025-11-01T12-00-00.jsonl", facts=eval_facts)
