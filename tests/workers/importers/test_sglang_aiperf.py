"""sglang and aiperf: real files from one llama-server run (see the fixtures README)."""

from __future__ import annotations

import json

import pytest

from tests.workers.importers.files import fixture_path, read_json
from workers.importers import Facts, ImportFailure, import_file

SGLANG = "sglang-0.5.23/llama-server_c4_bench_serving.jsonl"
AIPERF = "aiperf-0.13.0/llama-server_completions_c4_profile_export_aiperf.json"
AIPERF_RECORDS = "aiperf-0.13.0/llama-server_completions_c4_profile_export.jsonl"


def _sglang_line() -> dict:
    return json.loads(fixture_path(SGLANG).read_text(), parse_constant=float)


def test_it_reads_the_sglang_line_with_infinity_and_keeps_values(llama_server):
    raw = _sglang_line()
    path = fixture_path(SGLANG)
    [doc] = import_file(path.read_bytes(), path.name, facts=llama_server)
    point = doc.points[0]
    assert point.request_rate is None  # Infinity: closed loop at max_concurrency
    assert point.concurrency == raw["max_concurrency"] == 4
    assert point.window_s == raw["duration"]
    assert point.throughput.requests_per_s == raw["request_throughput"]
    assert point.throughput.input_tok_s == raw["input_throughput"]
    assert point.throughput.output_tok_s == raw["output_throughput"]
    assert point.throughput.total_tok_s == raw["total_throughput"]
    assert point.tokens.input == raw["total_input_tokens"]
    assert point.tokens.output == raw["total_output_tokens"]
    for ours, theirs in (
        ("ttft", "ttft"),
        ("tpot", "tpot"),
        ("itl", "itl"),
        ("e2el", "e2e_latency"),
    ):
        dist = getattr(point.latency_ms, ours)
        assert dist.mean == raw[f"mean_{theirs}_ms"]
        assert dist.p50 == raw[f"median_{theirs}_ms"]
        assert dist.std == raw[f"std_{theirs}_ms"]
        assert dist.p90 == raw[f"p90_{theirs}_ms"]
        assert dist.p95 == raw[f"p95_{theirs}_ms"]
        assert dist.p99 == raw[f"p99_{theirs}_ms"]
    assert doc.scenario.input_tokens == raw["random_input_len"]
    assert doc.scenario.output_tokens == raw["random_output_len"]
    assert doc.scenario.length_spread == 0
    assert doc.scenario.dataset == "random"
    assert point.requests.succeeded == raw["completed"]
    assert point.requests.total is None  # sglang does not say how many were sent


def test_it_refuses_infinity_outside_request_rate(llama_server):
    line = (
        fixture_path(SGLANG)
        .read_text()
        .replace('"duration": 10.567762149999908', '"duration": Infinity')
    )
    with pytest.raises(ImportFailure, match="duration is inf"):
        import_file(line.encode(), "x.jsonl", facts=llama_server)


def test_it_names_an_unknown_sglang_latency_field(llama_server):
    raw = _sglang_line()
    raw["mean_queue_time_ms"] = 1.0
    data = json.dumps(raw).replace("Infinity", "Infinity").encode()
    with pytest.raises(ImportFailure, match="unknown latency field mean_queue_time_ms"):
        import_file(data, "x.jsonl", facts=llama_server, format_name="sglang-bench-serving")


def test_it_states_the_sglang_length_range_as_a_spread(llama_server):
    raw = _sglang_line()
    raw["random_range_ratio"] = 0.5  # sglang draws lengths uniformly from [L/2, L]
    [doc] = import_file(json.dumps(raw).encode(), "x.jsonl", facts=llama_server)
    assert doc.scenario.input_tokens == 384  # 512 * 1.5 / 2
    assert doc.scenario.output_tokens == 48
    assert doc.scenario.length_spread == pytest.approx(1 / 3)


def test_it_reads_sglang_detailed_arrays_as_request_counts(llama_server):
    raw = _sglang_line()
    raw |= {
        "input_lens": [511, 511, 511],
        "output_lens": [64, 64, 0],
        "ttfts": [0.9, 1.0, 0.0],
        "itls": [[0.016] * 63, [0.017] * 63, []],
        "generated_texts": ["a", "b", ""],
        "errors": ["", "", "Timeout"],
    }
    [doc] = import_file(json.dumps(raw).encode(), "x.jsonl", facts=llama_server)
    assert doc.points[0].requests.model_dump() == {"total": 3, "succeeded": 2, "failed": 1}


def test_it_imports_the_aiperf_summary_with_units_from_the_file(llama_server):
    raw = read_json(AIPERF)
    path = fixture_path(AIPERF)
    [doc] = import_file(path.read_bytes(), path.name, facts=llama_server)
    point = doc.points[0]
    pairs = {
        "ttft": "time_to_first_token",
        "ttfo": "time_to_first_output_token",
        "tpot": "inter_token_latency",
        "itl": "inter_chunk_latency",
        "e2el": "request_latency",
    }
    for ours, theirs in pairs.items():
        assert raw[theirs]["unit"] == "ms"
        dist = getattr(point.latency_ms, ours)
        assert dist.mean == raw[theirs]["avg"]
        for stat in ("p50", "p90", "p95", "p99", "min", "max", "std"):
            assert getattr(dist, stat) == raw[theirs][stat]
    assert raw["benchmark_duration"]["unit"] == "sec"
    assert point.window_s == raw["benchmark_duration"]["avg"]
    assert point.throughput.requests_per_s == raw["request_throughput"]["avg"]
    assert point.throughput.output_tok_s == raw["output_token_throughput"]["avg"]
    # Counted with the tokenizer (total_isl 10220) while the stored counts are usage
    # (10240): kept aside, not mixed into the usage-labelled point.
    assert point.throughput.input_tok_s is None
    assert (
        doc.environment.extra["throughput_not_usage_counted"]["input_tok_s"]["value"]
        == (raw["input_token_throughput"]["avg"])
    )
    assert point.throughput.total_tok_s == raw["total_token_throughput"]["avg"]
    assert point.tokens.input == raw["total_usage_prompt_tokens"]["avg"]
    assert point.tokens.output == raw["total_usage_completion_tokens"]["avg"]
    assert point.tokens.cached == raw["total_usage_prompt_cache_read_tokens"]["avg"]
    assert point.prefix_cache_hit_rate == raw["overall_usage_prompt_cache_read_pct"]["avg"] / 100
    assert point.interactivity_tok_s_user.p50 == raw["output_token_throughput_per_user"]["p50"]
    assert point.requests.succeeded == raw["completed_request_count"]["avg"]
    assert point.concurrency == 4
    assert doc.scenario.warmup_requests == 4
    assert doc.scenario.input_tokens == 512
    assert doc.scenario.output_tokens == 64
    assert doc.model.name == "random-weights-llama"
    assert doc.environment.extra["model_in_file"] == "llama"


def test_it_converts_an_aiperf_metric_given_in_seconds(llama_server):
    raw = read_json(AIPERF)
    raw["time_to_first_token"] = {"unit": "sec", "avg": 0.5, "p50": 0.25, "p99": 1.5}
    [doc] = import_file(json.dumps(raw).encode(), "x.json", facts=llama_server)
    ttft = doc.points[0].latency_ms.ttft
    assert (ttft.mean, ttft.p50, ttft.p99) == (500.0, 250.0, 1500.0)


def test_it_leaves_aiperf_warmup_records_out(llama_server):
    summary, records = fixture_path(AIPERF), fixture_path(AIPERF_RECORDS)
    rows = [json.loads(line) for line in records.read_text().splitlines()]
    measured = [r for r in rows if r["metadata"]["benchmark_phase"] == "profiling"]
    [doc] = import_file(
        summary.read_bytes(),
        summary.name,
        facts=llama_server,
        companions=[(records.read_bytes(), records.name)],
    )
    got = doc.points[0].records
    assert len(got) == len(measured) == 20
    origin = min(r["metadata"]["request_start_ns"] for r in measured)
    for record, row in zip(got, measured, strict=True):
        metrics = row["metrics"]
        assert record.t_send_ms == (row["metadata"]["request_start_ns"] - origin) / 1e6
        assert record.ttft_ms == metrics["time_to_first_token"]["value"]
        assert record.e2el_ms == metrics["request_latency"]["value"]
        assert record.n_in == metrics["usage_prompt_tokens"]["value"]
        assert record.n_out == metrics["usage_completion_tokens"]["value"]
        assert record.chunks == len(metrics["inter_chunk_latency"]["value"]) + 1
        assert record.status == "ok"
    # With or without its records it is the same measurement: one key, so one run.
    assert doc.idempotency_key == f"sha256:{doc.source.file_sha256}"


def test_an_unknown_aiperf_metric_is_kept_as_written_and_the_run_imports(llama_server):
    raw = read_json(AIPERF)
    raw["goodput_rate"] = {"unit": "requests/sec", "avg": 1.0, "p50": 1.0}
    [doc] = import_file(json.dumps(raw).encode(), "x.json", facts=llama_server)
    assert doc.environment.extra["metrics_not_read"] == {
        "goodput_rate": {"avg": 1.0, "unit": "requests/sec"}
    }
    assert doc.points[0].throughput.requests_per_s == raw["request_throughput"]["avg"]


def test_an_unknown_aiperf_field_that_is_no_metric_still_refuses_the_file(llama_server):
    raw = read_json(AIPERF)
    raw["goodput_mode"] = "strict"
    with pytest.raises(ImportFailure, match=r"unknown field\(s\) goodput_mode"):
        import_file(json.dumps(raw).encode(), "x.json", facts=llama_server)


def test_aiperf_adjusted_metrics_are_kept_beside_the_ones_mapped(llama_server):
    raw = read_json(AIPERF)
    raw["adj_output_token_throughput"] = {**raw["output_token_throughput"], "avg": 1.5}
    [doc] = import_file(json.dumps(raw).encode(), "x.json", facts=llama_server)
    aside = doc.environment.extra["metrics_without_slot"]["adj_output_token_throughput"]
    assert aside == {"avg": 1.5, "unit": raw["output_token_throughput"]["unit"]}
    assert doc.points[0].throughput.output_tok_s != 1.5


def test_it_refuses_an_aiperf_schema_it_does_not_know(llama_server):
    raw = read_json(AIPERF)
    raw["schema_version"] = "2.0"
    with pytest.raises(ImportFailure, match="schema_version '2.0'"):
        import_file(json.dumps(raw).encode(), "x.json", facts=llama_server)


def test_it_sends_aiperf_records_alone_back_with_directions():
    path = fixture_path(AIPERF_RECORDS)
    with pytest.raises(ImportFailure, match="give this file with --records"):
        import_file(path.read_bytes(), path.name, facts=Facts())
