"""Files we do not read are refused naming the format and version seen, not a JSON error.

The samples hold only the keys the sniffers and refusals look at (guidellm 0.2/0.3's
`benchmarks[].args` and `run_stats`, a later report's `metadata.version`), as JSON or YAML;
none is a measurement, and none is a real file.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from workers.importers import ImportFailure, import_file

GUIDELLM_03 = {
    "benchmarks": [
        {
            "type_": "generative_benchmark",
            "args": {"strategy": {"type_": "concurrent", "streams": 4}},
            "run_stats": {"start_time": 1.0, "end_time": 2.0},
            "metrics": {},
        }
    ]
}
# A layout after the ones read (version 2 is guidellm 0.7 and later, read since issue 59).
GUIDELLM_LATER = {
    "metadata": {"version": 3, "guidellm_version": "0.9.0"},
    "config": {"spec": {"profile": {"kind": "constant"}}},
    "benchmarks": [{"config": {"strategy": {"kind": "constant"}}, "metrics": {}}],
}
GUIDELLM_YAML = b"""metadata:
  version: 1
  guidellm_version: 0.3.1
benchmarks:
- type_: generative_benchmark
  run_stats:
    start_time: 1.0
  args:
    strategy:
      type_: synchronous
  metrics: {}
"""


def _refusal(data: bytes, name: str, **kwargs: str) -> str:
    with pytest.raises(ImportFailure) as refused:
        import_file(data, name, **kwargs)
    return str(refused.value)


@pytest.mark.parametrize("format_name", [None, "guidellm", "vllm-bench-serve"])
def test_a_guidellm_yaml_report_is_named_as_yaml_not_invalid_json(format_name):
    message = _refusal(GUIDELLM_YAML, "benchmarks.yaml", format_name=format_name)
    assert "YAML file, not JSON" in message
    assert "guidellm report written as YAML (guidellm 0.3.1)" in message
    assert "--output-path ending in .json" in message
    assert "guidellm 0.2/0.3" in message  # and its layout is one we do not read either
    assert "line 1" not in message


def test_a_yaml_file_of_another_tool_is_named_as_yaml():
    message = _refusal(b"results:\n  ttft: 0.5\nmodel: m\n", "out.yaml")
    assert "YAML file, not JSON" in message and "keys model, results" in message


def test_a_guidellm_0_3_report_is_sniffed_and_refused_naming_its_layout():
    # 0.2/0.3 reports hold only `benchmarks`: without --format they were 'cannot tell'.
    message = _refusal(json.dumps(GUIDELLM_03).encode(), "benchmarks.json")
    assert "guidellm 0.2/0.3" in message and "benchmarks[].args.strategy" in message
    assert "cannot tell the format" not in message


def test_a_guidellm_report_of_a_later_metadata_version_is_refused_naming_it():
    message = _refusal(json.dumps(GUIDELLM_LATER).encode(), "benchmarks.json")
    assert "guidellm 0.9.0 report of metadata version 3" in message
    assert "we read report versions 1" in message and "and 2" in message
    assert "unknown field" not in message


def test_text_that_does_not_open_like_yaml_keeps_its_json_error():
    # A CSV is not parsed as YAML (it would be scanned whole as one scalar).
    message = _refusal(b"model,ttft_ms\nm,12.5\n", "out.csv")
    assert "cannot tell the format" in message and "YAML" not in message


# --- aiperf's CSV export (real files: tests/fixtures/wild/aiperf-csv, SOURCES.md) ----------

WILD = Path(__file__).resolve().parents[2] / "fixtures" / "wild"
CSV_AND_JSON = [
    (
        WILD / "aiperf-csv" / f"{run}_profile_export_aiperf.csv",
        WILD / "aiperf" / f"{run}_profile_export_aiperf.json",
    )
    for run in (
        "qwen36-vllm-aiperf-benchmark_nvfp4_5090_agent_c16",
        "aiperf-lab-tests_llama-3.2-3b-instruct-gguf_q4_k_m_concurrency1",
    )
]
CSV_STATS = {"Time to First Token (ms)": "time_to_first_token",
             "Request Latency (ms)": "request_latency",
             "Inter Token Latency (ms)": "inter_token_latency"}  # fmt: skip


@pytest.mark.parametrize(("csv_path", "json_path"), CSV_AND_JSON, ids=lambda p: p.parent.name)
def test_an_aiperf_csv_is_refused_by_name_pointing_at_the_json_of_the_same_run(csv_path, json_path):
    with pytest.raises(ImportFailure) as refused:
        import_file(csv_path.read_bytes(), csv_path.name)
    message = str(refused.value)
    assert "aiperf's CSV export" in message and "recognised but not read" in message
    assert "profile_export_aiperf.json" in message and "cannot tell" not in message
    # The JSON it points at is the same run: each CSV statistic is the JSON's, rounded.
    rows = list(csv.reader(io.StringIO(csv_path.read_text())))
    header = rows[0]
    raw = json.loads(json_path.read_text())
    checked = 0
    for row in rows[1:]:
        if row and row[0] in CSV_STATS:
            metric = raw[CSV_STATS[row[0]]]
            for stat, value in zip(header[1:], row[1:], strict=True):
                if stat in metric:  # aiperf 0.8's JSON has no 'sum'
                    assert float(value) == round(metric[stat], 2), (row[0], stat)
                    checked += 1
    assert checked >= 3 * 13  # avg, min, max, p1..p99 and std of three latencies


@pytest.mark.parametrize(("csv_path", "json_path"), CSV_AND_JSON[:1], ids=["aiperf-csv"])
def test_a_format_recognised_and_not_read_is_refused_by_name_whatever_format_is_given(
    csv_path, json_path
):
    with pytest.raises(ImportFailure, match="aiperf's CSV export.*recognised but not read"):
        import_file(csv_path.read_bytes(), csv_path.name, format_name="aiperf")


# vLLM's multi-turn benchmark (benchmarks/multi_turn/benchmark_serving_multi_turn.py) writes
# RequestStats._asdict() rows with --stats-json-output and {"id", "messages"} conversations
# with --output-file. Built from that source's shape (no real file of either was found);
# the values are placeholders, not measurements.
MULTI_TURN_STATS_ROW = {
    "ttft_ms": 1.0, "tpot_ms": 1.0, "latency_ms": 2.0, "start_time_ms": 0.0,
    "input_num_turns": 1, "input_num_tokens": 1, "output_num_tokens": 1,
    "output_num_chunks": 1, "output_num_first_chunk_tokens": 1,
    "approx_cached_percent": 0.0, "conversation_id": "CONV_ID_0", "client_id": 0,
}  # fmt: skip
MULTI_TURN_CONVERSATIONS = [
    {"id": "CONV_ID_0", "messages": [{"role": "user", "content": "a"},
                                     {"role": "assistant", "content": "b"}]}
]  # fmt: skip


@pytest.mark.parametrize("format_name", [None, "vllm-bench-serve"])
def test_vllm_multi_turn_stats_are_refused_by_their_name(format_name):
    data = json.dumps([MULTI_TURN_STATS_ROW]).encode()
    message = _refusal(data, "stats.json", format_name=format_name)
    assert "vLLM's multi-turn benchmark per-request stats" in message
    assert "--stats-json-output" in message
    assert "recognised but not read" in message
    assert "cannot tell" not in message


def test_vllm_multi_turn_conversations_are_refused_as_holding_no_measurements():
    message = _refusal(json.dumps(MULTI_TURN_CONVERSATIONS).encode(), "conversations.json")
    assert "vLLM's multi-turn benchmark --output-file" in message
    assert "no measurements" in message


@pytest.mark.parametrize("format_name", [None, "vllm-bench-serve"])
def test_a_multi_turn_summary_shaped_like_bench_serve_is_refused_by_its_name(format_name):
    """A real `vllm bench serve` result with per-turn and per-conversation fields added (as a
    multi-turn benchmark's summary adds them; the added values are placeholders): it is not
    read as one bench serve run, and the refusal says what it is rather than listing the
    fields it does not know."""
    real = Path(__file__).resolve().parents[2] / "fixtures" / "wild" / "vllm-bench-serve"
    row = json.loads((real / "er0080-sweep_v0.25.1_max_num_seqs=4_run=0.json").read_text())
    row |= {"num_conversations": 32, "mean_turns_per_conversation": 4.0, "max_num_turns": 8}
    with pytest.raises(ImportFailure) as refused:
        import_file(json.dumps(row).encode(), "multi_turn_summary.json", format_name=format_name)
    message = str(refused.value)
    assert "multi-turn benchmark's output" in message
    assert "max_num_turns, mean_turns_per_conversation, num_conversations" in message
    assert "recognised but not read" in message
