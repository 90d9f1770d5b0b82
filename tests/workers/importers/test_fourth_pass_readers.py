"""The readers issue 59 added, beyond the corpus's checks: what each refuses, and how each
agrees with what the same run wrote elsewhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workers.importers import ImportFailure, facts_from_arguments, import_file

WILD = Path(__file__).resolve().parents[2] / "fixtures" / "wild"
LATENCY = next((WILD / "vllm-bench-latency").glob("*_results_latency_*.json"))
CONDENSED = next((WILD / "llmperf-condensed").glob("*Meta-Llama-3-8B*"))
RESULTS = next((WILD / "llmperf-sweep").glob("*Meta-Llama-3-8B*"))
RUNNER = next((WILD / "inferencex-runner-result").glob("*vllm_gptoss*conc512.json"))
FACTS = facts_from_arguments(
    {"fact_model": "m", "accelerator": "H100", "gpus": "1", "engine": "tgi", "weights": "BF16"}
)


def test_the_condensed_llmperf_sweep_is_the_same_run_as_its_full_summaries():
    # llmperf-bench wrote both from one sweep: TTFT mean is results_ttft_s_mean x 1000 and
    # the throughput is results_mean_output_throughput_token_per_s, at every concurrency.
    [condensed] = import_file(CONDENSED.read_bytes(), CONDENSED.name, facts=FACTS)
    [full] = import_file(RESULTS.read_bytes(), RESULTS.name, facts=FACTS)
    assert [p.concurrency for p in condensed.points] == [p.concurrency for p in full.points]
    for short, whole in zip(condensed.points, full.points, strict=True):
        assert short.latency_ms.ttft.mean == pytest.approx(whole.latency_ms.ttft.mean, rel=1e-12)
        assert short.throughput.output_tok_s == whole.throughput.output_tok_s
    assert (condensed.scenario.input_tokens, condensed.scenario.output_tokens) == (
        full.scenario.input_tokens,
        full.scenario.output_tokens,
    )


def _latency_file(tmp_path: Path, edit) -> Path:
    raw = json.loads(LATENCY.read_text())
    edit(raw)
    path = tmp_path / LATENCY.name
    path.write_text(json.dumps(raw))
    return path


def test_a_latency_file_whose_percentiles_do_not_follow_from_its_latencies_is_refused(tmp_path):
    path = _latency_file(tmp_path, lambda raw: raw["percentiles"].update({"99": 1.0}))
    with pytest.raises(ImportFailure, match="percentiles.99 is 1.0, but the latencies give"):
        import_file(path.read_bytes(), path.name, facts=FACTS)


def test_a_latency_file_without_latencies_holds_no_measurement(tmp_path):
    path = _latency_file(tmp_path, lambda raw: raw.update(latencies=[]))
    with pytest.raises(ImportFailure, match="latencies is empty: the file holds no measurement"):
        import_file(path.read_bytes(), path.name, facts=FACTS)


def test_a_runner_result_never_reads_the_hosts_gpu_count_as_the_deployments():
    raw = json.loads(RUNNER.read_text())
    assert (raw["tp"], raw["gpu"]["n_gpus"]) == (4, 8)  # TP4 on an 8-GPU host
    [doc] = import_file(RUNNER.read_bytes(), RUNNER.name)
    assert doc.deployment.gpus == 4
    per_gpu = doc.points[0].throughput.total_tok_s / doc.deployment.gpus
    assert per_gpu == raw["metrics"]["total_token_throughput"] / 4


def test_a_runner_result_with_a_field_it_does_not_know_is_refused_by_name(tmp_path):
    raw = json.loads(RUNNER.read_text())
    raw["metrics"]["p90_ttft_ms"] = 1.0
    path = tmp_path / RUNNER.name
    path.write_text(json.dumps(raw))
    with pytest.raises(ImportFailure, match="metrics: unknown field.s. p90_ttft_ms"):
        import_file(path.read_bytes(), path.name)


GUIDELLM_V2 = next((WILD / "guidellm").glob("inferboard-generated_*_concurrent-sweep_*.json"))


def test_a_guidellm_v2_report_of_fixed_synthetic_lengths_states_them(tmp_path):
    # The report's data source swapped for 0.8's synthetic_text as guidellm dumps it (every
    # field present, the spreads None): fixed lengths are stated, not derived from means.
    raw = json.loads(GUIDELLM_V2.read_text())
    raw["config"]["spec"]["data"] = [
        {
            "kind": "synthetic_text",
            "prompt_tokens": 67,
            "output_tokens": 16,
            "prompt_tokens_stdev": None,
            "output_tokens_stdev": None,
            "turns": 1,
        }  # fmt: skip
    ]
    path = tmp_path / GUIDELLM_V2.name
    path.write_text(json.dumps(raw))
    [doc] = import_file(path.read_bytes(), path.name, facts=FACTS)
    assert (doc.scenario.input_tokens, doc.scenario.output_tokens) == (67, 16)
    assert doc.scenario.length_spread == 0.0
    assert "scenario_lengths" not in doc.environment.extra
    raw["config"]["spec"]["data"][0]["prompt_tokens_stdev"] = 8  # a spread: not fixed
    path.write_text(json.dumps(raw))
    [spread] = import_file(path.read_bytes(), path.name, facts=FACTS)
    assert spread.environment.extra["scenario_lengths"]["derived"]
