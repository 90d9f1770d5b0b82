from __future__ import annotations

import json

import pytest

from tests.workers.importers.files import fixture_path
from workers.importers import (
    Facts,
    ImportFailure,
    facts_from_arguments,
    formats,
    import_file,
    load_facts_yaml,
    sniff,
)

REAL_FILES = {
    "inferencex/glm5_fp8_vllm_tp8_isl1024_osl128_conc4.json": "inferencex-summary",
    "inferencex/supplemental-evals.json": "inferencex-evals",
    "sglang-0.5.23/llama-server_c4_bench_serving.jsonl": "sglang-bench-serving",
    "aiperf-0.13.0/llama-server_completions_c4_profile_export_aiperf.json": "aiperf",
    "aiperf-0.13.0/llama-server_completions_c4_profile_export.jsonl": "aiperf-records",
}


@pytest.mark.parametrize(("relative", "expected"), REAL_FILES.items())
def test_it_sniffs_each_real_file(relative, expected):
    path = fixture_path(relative)
    assert sniff(path.read_bytes(), path.name) == expected


def test_it_tells_vllm_apart_from_the_inferencex_summary():
    vllm = {"model_id": "m", "median_ttft_ms": 1.0, "duration": 1.0}
    assert sniff(json.dumps(vllm).encode(), "a.json") == "vllm-bench-serve"


def test_it_says_what_it_saw_when_it_cannot_tell():
    with pytest.raises(ImportFailure) as failure:
        sniff(json.dumps({"alpha": 1, "beta": 2}).encode(), "mystery.json")
    message = str(failure.value)
    assert "mystery.json" in message
    assert "a JSON object with keys alpha, beta" in message
    assert "--format" in message


def test_it_says_when_the_file_is_not_json_at_all():
    with pytest.raises(ImportFailure, match="neither JSON nor JSON lines"):
        sniff(b"<html>oops</html>", "page.html")


def test_every_format_names_the_tool_version_it_reads():
    for fmt in formats().values():
        assert any(ch.isdigit() for ch in fmt.tool), fmt.name
        parse_module = __import__(fmt.parse.__module__, fromlist=["x"])
        assert parse_module.__doc__ and any(ch.isdigit() for ch in parse_module.__doc__)


@pytest.mark.parametrize(
    "relative",
    [
        "inferencex/glm5_fp8_vllm_tp8_isl1024_osl128_conc4.json",
        "aiperf-0.13.0/llama-server_completions_c4_profile_export_aiperf.json",
        "inferencex/supplemental-evals.json",
    ],
)
def test_it_reports_a_truncated_file_clearly(relative, h200_vllm):
    path = fixture_path(relative)
    data = path.read_bytes()
    fmt = REAL_FILES[relative]
    with pytest.raises(ImportFailure, match=r"not valid JSON .*truncated"):
        import_file(data[: len(data) // 2], path.name, facts=h200_vllm, format_name=fmt)


def test_it_reports_an_empty_file():
    with pytest.raises(ImportFailure, match="empty"):
        import_file(b"  \n", "empty.json")


def test_it_rejects_an_unknown_format_name():
    with pytest.raises(ImportFailure, match="unknown format 'nope'"):
        import_file(b"{}", "x.json", format_name="nope")


def test_it_loads_facts_from_yaml():
    facts = load_facts_yaml(
        """
        model: zai-org/GLM-5-FP8
        deployment:
          accelerator: MI355X
          gpus: 8
          engine: {name: sglang, version: 0.5.6}
          quantization: {weights: MXFP4, kv_cache: FP8}
          parallelism: {tp: 8, dp_attention: true}
          speculative: {method: mtp, draft_tokens: 3}
        scenario: {input_tokens: 20000, output_tokens: 1000, prefix_cache_hit_rate: 0.6}
        """
    )
    assert facts.deployment.speculative.draft_tokens == 3
    assert facts.deployment.parallelism.dp_attention is True
    assert facts.scenario.prefix_cache_hit_rate == 0.6


def test_it_names_a_misspelt_fact():
    with pytest.raises(ImportFailure, match="deployment.acelerator"):
        load_facts_yaml("deployment: {acelerator: H200}")


def test_flags_win_over_the_yaml():
    facts = facts_from_arguments(
        {"accelerator": "B200", "gpus": "4", "tp": 4},
        "deployment: {accelerator: H200, gpus: 8, engine: {name: vllm}}",
    )
    assert facts.deployment.accelerator == "B200"
    assert facts.deployment.gpus == 4
    assert facts.deployment.engine.name == "vllm"
    assert facts.deployment.parallelism.tp == 4


def test_it_refuses_a_gpu_flag_that_is_not_a_number():
    with pytest.raises(ImportFailure, match="--gpus"):
        facts_from_arguments({"gpus": "eight"})


def test_a_user_model_name_replaces_a_served_alias_and_the_alias_is_kept(llama_server):
    path = fixture_path("aiperf-0.13.0/llama-server_completions_c4_profile_export_aiperf.json")
    [doc] = import_file(path.read_bytes(), path.name, facts=llama_server)
    assert doc.model.name == "random-weights-llama"
    assert doc.environment.extra["model_in_file"] == "llama"


def test_importing_the_same_bytes_twice_gives_the_same_document(h200_vllm):
    path = fixture_path("inferencex/glm5_fp8_vllm_tp8_isl1024_osl128_conc4.json")
    first = import_file(path.read_bytes(), path.name, facts=h200_vllm)[0].to_json_dict()
    second = import_file(path.read_bytes(), path.name, facts=h200_vllm)[0].to_json_dict()
    assert first == second


def test_no_facts_at_all_is_a_clear_error_for_a_file_without_a_model():
    path = fixture_path("sglang-0.5.23/llama-server_c4_bench_serving.jsonl")
    with pytest.raises(ImportFailure, match="does not name the model"):
        import_file(path.read_bytes(), path.name, facts=Facts())


def test_an_exported_document_imports_unchanged(h200_vllm):
    path = fixture_path("inferencex/glm5_fp8_vllm_tp8_isl1024_osl128_conc4.json")
    [original] = import_file(path.read_bytes(), path.name, facts=h200_vllm)
    exported = json.dumps(original.to_json_dict()).encode()
    assert sniff(exported, "run.json") == "inferboard"
    [again] = import_file(exported, "run.json")
    assert again.to_json_dict() == original.to_json_dict()


def test_facts_are_refused_for_an_exported_document(h200_vllm):
    path = fixture_path("inferencex/glm5_fp8_vllm_tp8_isl1024_osl128_conc4.json")
    [original] = import_file(path.read_bytes(), path.name, facts=h200_vllm)
    exported = json.dumps(original.to_json_dict()).encode()
    with pytest.raises(ImportFailure, match="without --deployment"):
        import_file(exported, "run.json", facts=h200_vllm)


DEPLOYMENT_FACTS = [
    ("deployment.accelerator", "--accelerator", "accelerator", "H100"),
    ("deployment.gpus", "--gpus", "gpus", "1"),
    ("deployment.engine.name", "--engine", "engine", "vllm"),
    ("deployment.quantization.weights", "--weights", "weights", "BF16"),
]


@pytest.mark.parametrize(
    ("relative", "others"),
    [
        # inference-perf's lifecycle report states neither the model nor the deployment (its
        # lengths are the measured means it states).
        (
            "inference-perf/kubecon-na-2025_vllm_summary_lifecycle_metrics.json",
            [("model.name", "--model", "fact_model", "m")],
        ),
        # benchmark_serving.py lines whose output totals do not divide: the output length
        # is asked with the deployment, in the same refusal.
        (
            "inferencex-benchmark-serving/vllm-bench-automation_results.jsonl",
            [("scenario.output_tokens", "--output-tokens", "output_tokens", 128)],
        ),
    ],
)
def test_a_refusal_names_every_missing_fact_at_once_and_those_facts_import_it(relative, others):
    # One refusal names every missing fact with its flag, so the first retry is the last.
    path = fixture_path("").parent / "wild" / relative
    expected = DEPLOYMENT_FACTS + others
    with pytest.raises(ImportFailure) as failure:
        import_file(path.read_bytes(), path.name, facts=Facts())
    message = str(failure.value)
    for fact, flag, _, _ in expected:
        assert fact in message and flag in message, fact
    given = facts_from_arguments({option: value for _, _, option, value in expected})
    docs = import_file(path.read_bytes(), path.name, facts=given)
    assert docs
