"""Formats without a real file here: samples built from each tool's source.

guidellm: GenerativeBenchmarksReport as dumped by `save_file` in guidellm 0.5.x
(src/guidellm/benchmark/schemas/generative/{report,benchmark,metrics}.py; DistributionSummary
from src/guidellm/schemas/statistics.py): metrics are {successful, incomplete, errored,
total} summaries; `*_ms` in milliseconds, `request_latency` in seconds.

inference-perf: `summarize_requests(...).model_dump()` from inference_perf/reportgen/base.py
(kubernetes-sigs/inference-perf at 010d12fb): latency summaries in seconds with keys mean,
min, max, median and p<P> formatted with `:g`.
"""

from __future__ import annotations

import json

import pytest

from workers.importers import Facts, ImportFailure, import_file, sniff


def summary(mean, median, p90, p95, p99, p999, *, count=10, low=None, high=None) -> dict:
    low = mean if low is None else low
    high = p999 if high is None else high
    return {
        "mean": mean,
        "median": median,
        "mode": median,
        "variance": 0.25,
        "std_dev": 0.5,
        "min": low,
        "max": high,
        "count": count,
        "total_sum": mean * count,
        "percentiles": {
            "p001": low,
            "p01": low,
            "p05": low,
            "p10": low,
            "p25": low,
            "p50": median,
            "p75": median,
            "p90": p90,
            "p95": p95,
            "p99": p99,
            "p999": p999,
        },
    }


def by_status(successful: dict) -> dict:
    return {"successful": successful, "incomplete": None, "errored": None, "total": successful}


def guidellm_report(strategy: dict | None = None) -> dict:
    metrics = {
        "request_totals": {"successful": 10, "incomplete": 1, "errored": 1, "total": 12},
        "requests_per_second": by_status(summary(2.5, 2.5, 3, 3, 3, 3)),
        "request_concurrency": by_status(summary(4, 4, 4, 4, 4, 4)),
        "request_latency": by_status(summary(1.5, 1.25, 2.0, 2.25, 2.5, 2.75, low=1.0)),
        "request_streaming_iterations_count": by_status(summary(64, 64, 64, 64, 64, 64)),
        "prompt_token_count": by_status(summary(512, 512, 512, 512, 512, 512)),
        "output_token_count": by_status(summary(64, 64, 64, 64, 64, 64)),
        "total_token_count": by_status(summary(576, 576, 576, 576, 576, 576)),
        "time_to_first_token_ms": by_status(summary(300, 250, 400, 450, 500, 550, low=200)),
        "time_to_first_output_token_ms": by_status(summary(300, 250, 400, 450, 500, 550, low=200)),
        "time_per_output_token_ms": by_status(summary(20, 20, 22, 23, 24, 25, low=19)),
        "inter_token_latency_ms": by_status(summary(16, 16, 17, 18, 19, 20, low=15)),
        "prompt_tokens_per_second": by_status(summary(1280, 1200, 1400, 1500, 1600, 1700)),
        "output_tokens_per_second": by_status(summary(160, 150, 170, 180, 190, 200)),
        "tokens_per_second": by_status(summary(1440, 1400, 1500, 1600, 1700, 1800)),
        "output_tokens_per_iteration": by_status(summary(1, 1, 1, 1, 1, 1)),
        "iter_tokens_per_iteration": by_status(summary(1, 1, 1, 1, 1, 1)),
        "text": {"tokens": None, "words": None, "characters": None},
        "image": {"tokens": None, "images": None, "pixels": None, "bytes": None},
        "video": {"tokens": None, "frames": None, "seconds": None, "bytes": None},
        "audio": {"tokens": None, "samples": None, "seconds": None, "bytes": None},
        "tool_call": {"tokens": None, "mixed_tokens": None, "count": None},
    }
    return {
        "args": {
            "target": "http://127.0.0.1:8000",
            "model": "meta-llama/Llama-3.1-8B-Instruct",
            "data": ["prompt_tokens=512,output_tokens=64"],
            "profile": "concurrent",
        },
        "benchmarks": [
            {
                "type_": "generative_benchmark",
                "config": {
                    "id_": "b1",
                    "run_id": "r1",
                    "run_index": 0,
                    "strategy": strategy or {"type_": "concurrent", "streams": 4},
                },
                "scheduler_metrics": {"requests_made": {"successful": 10}},
                "metrics": metrics,
                "requests": {"successful": [], "incomplete": [], "errored": [], "total": None},
                "start_time": 1000.0,
                "end_time": 1004.0,
                "duration": 4.0,
                "warmup_duration": 0.0,
                "cooldown_duration": 0.0,
            }
        ],
    }


@pytest.fixture
def facts() -> Facts:
    return Facts.model_validate(
        {
            "deployment": {
                "accelerator": "B200",
                "gpus": 1,
                "engine": {"name": "vllm"},
                "quantization": {"weights": "BF16"},
            }
        }
    )


def test_it_sniffs_a_guidellm_report():
    assert sniff(json.dumps(guidellm_report()).encode(), "benchmarks.json") == "guidellm"


def test_it_reads_guidellm_request_latency_as_seconds_and_ttft_as_ms(facts):
    [doc] = import_file(json.dumps(guidellm_report()).encode(), "benchmarks.json", facts=facts)
    point = doc.points[0]
    assert point.latency_ms.e2el.mean == 1500.0
    assert point.latency_ms.e2el.p50 == 1250.0
    assert point.latency_ms.e2el.p999 == 2750.0
    assert point.latency_ms.ttft.p50 == 250
    assert point.latency_ms.ttft.p99 == 500
    assert point.latency_ms.ttfo.mean == 300
    assert point.latency_ms.tpot is None  # guidellm's ITL is token-weighted: kept aside
    assert doc.environment.extra["benchmarks"][0]["inter_token_latency_ms"]["mean"] == 16


def test_it_reads_guidellm_counts_rates_and_strategy(facts):
    [doc] = import_file(json.dumps(guidellm_report()).encode(), "benchmarks.json", facts=facts)
    point = doc.points[0]
    assert point.requests.model_dump() == {"total": 12, "succeeded": 10, "failed": 2}
    assert point.concurrency == 4
    assert point.window_s == 4.0
    assert point.throughput.requests_per_s == 2.5
    assert point.throughput.output_tok_s == 160
    assert point.throughput.input_tok_s == 1280
    assert point.throughput.total_tok_s == 1440
    assert (point.tokens.input, point.tokens.output) == (5120, 640)
    assert (doc.scenario.input_tokens, doc.scenario.output_tokens) == (512, 64)
    assert doc.scenario.arrival == "closed"
    assert doc.model.name == "meta-llama/Llama-3.1-8B-Instruct"


def test_it_reads_a_guidellm_open_loop_rate(facts):
    report = guidellm_report({"type_": "poisson", "rate": 3.0})
    [doc] = import_file(json.dumps(report).encode(), "benchmarks.json", facts=facts)
    assert doc.points[0].request_rate == 3.0
    assert doc.scenario.arrival == "open"


def test_it_names_an_unknown_guidellm_metric(facts):
    report = guidellm_report()
    report["benchmarks"][0]["metrics"]["queue_time_ms"] = by_status(summary(1, 1, 1, 1, 1, 1))
    with pytest.raises(ImportFailure, match="unknown metric.*queue_time_ms"):
        import_file(json.dumps(report).encode(), "benchmarks.json", facts=facts)


def stat_s(mean: float, median: float, p90: float, p99: float) -> dict:
    # summarize() with the default percentiles, keys formatted as f"p{p:g}".
    return {
        "mean": mean,
        "min": mean / 2,
        "max": p99 * 2,
        "p0.1": mean / 2,
        "p1": mean / 2,
        "p5": mean / 2,
        "p10": mean / 2,
        "p25": mean / 2,
        "median": median,
        "p75": median,
        "p90": p90,
        "p95": p90,
        "p99": p99,
        "p99.9": p99 * 2,
    }


def inference_perf_report() -> dict:
    return {
        "benchmark_time_seconds": 30.0,
        "load_summary": {
            "count": 100,
            "schedule_delay": stat_s(0.001, 0.001, 0.002, 0.004),
            "send_duration": 29.0,
            "requested_rate": 4.0,
            "achieved_rate": 3.45,
        },
        "successes": {
            "count": 98,
            "latency": {
                "request_latency": stat_s(2.0, 1.75, 2.5, 3.0),
                "normalized_time_per_output_token": stat_s(0.02, 0.02, 0.025, 0.03),
                "time_per_output_token": stat_s(0.015, 0.0125, 0.02, 0.025),
                "time_to_first_token": stat_s(0.25, 0.125, 0.5, 0.75),
                "inter_token_latency": stat_s(0.015, 0.01, 0.02, 0.05),
            },
            "throughput": {
                "input_tokens_per_sec": 1672.5,
                "output_tokens_per_sec": 418.125,
                "total_tokens_per_sec": 2090.625,
                "requests_per_sec": 3.2666666666666666,
                "images_per_sec": 0.0,
                "videos_per_sec": 0.0,
                "audios_per_sec": 0.0,
            },
            "request_size_bytes": stat_s(2048, 2048, 2048, 2048),
            "image": {"count": None, "pixels": None, "bytes": None, "aspect_ratio": None},
            "video": {"count": None, "frames": None, "pixels": None, "bytes": None},
            "audio": {"count": None, "seconds": None, "bytes": None},
            "prompt_tokens": {"total": 50176.0, "cached": 0.0, "uncached": 50176.0},
            "output_len": stat_s(128, 128, 128, 128),
            "output_tokens": {"total": 12544.0},
            "token_count_mismatches": 0,
            "client_fallback_requests": {"prompt": 0, "output": 0},
        },
        "failures": {
            "count": 2,
            "request_latency": stat_s(30.0, 30.0, 30.0, 30.0),
            "prompt_tokens": {"total": 1024.0, "cached": 0.0, "uncached": 1024.0},
            "by_label": {"Timeout": {"count": 2, "messages": [{"message": "timed out"}]}},
        },
    }


def test_it_sniffs_an_inference_perf_report():
    data = json.dumps(inference_perf_report()).encode()
    assert sniff(data, "summary_lifecycle_metrics.json") == "inference-perf"


def test_it_converts_inference_perf_seconds_to_milliseconds(facts):
    given = facts.model_dump(exclude_none=True)
    given |= {"model": "Qwen/Qwen3-8B", "scenario": {"input_tokens": 512, "output_tokens": 128}}
    facts = Facts.model_validate(given)
    data = json.dumps(inference_perf_report()).encode()
    [doc] = import_file(data, "stage_0_lifecycle_metrics.json", facts=facts)
    point = doc.points[0]
    assert point.latency_ms.ttft.mean == 250.0
    assert point.latency_ms.ttft.p50 == 125.0
    assert point.latency_ms.ttft.p99 == 750.0
    assert point.latency_ms.e2el.p50 == 1750.0
    assert point.latency_ms.tpot.p50 == 12.5
    assert point.latency_ms.itl is None  # intra-chunk zeros: kept aside, not our ITL
    assert point.window_s == 30.0
    assert point.request_rate == 4.0
    assert point.requests.model_dump() == {"total": 100, "succeeded": 98, "failed": 2}
    assert point.throughput.output_tok_s == 418.125
    assert (point.tokens.input, point.tokens.output, point.tokens.cached) == (50176, 12544, None)
    assert point.tokens.source == "usage"
    assert point.errors == {"Timeout": 2}
    assert doc.status == "partial"


def test_it_refuses_inference_perf_counts_that_do_not_add_up(facts):
    report = inference_perf_report()
    report["load_summary"]["count"] = 99
    with pytest.raises(ImportFailure, match="load_summary.count 99"):
        import_file(json.dumps(report).encode(), "summary.json", facts=facts)


def test_inference_perf_needs_the_model_from_the_user(facts):
    data = json.dumps(inference_perf_report()).encode()
    with pytest.raises(ImportFailure, match="does not name the model"):
        import_file(data, "summary_lifecycle_metrics.json", facts=facts)
