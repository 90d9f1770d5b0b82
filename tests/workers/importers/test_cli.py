from __future__ import annotations

import json

from tests.workers.importers.files import fixture_path, read_json
from workers.importers.cli import main
from workers.submit import server_base

SUMMARY = "inferencex/glm5_fp8_vllm_tp8_isl1024_osl128_conc64.json"
FACTS = [
    "--accelerator", "H200", "--gpus", "8", "--engine", "vllm", "--weights", "FP8",
    "--tp", "8", "--input-tokens", "1024", "--output-tokens", "128",
]  # fmt: skip


def test_it_writes_the_document_to_out(tmp_path):
    out = tmp_path / "doc.json"
    status = main(["import", str(fixture_path(SUMMARY)), *FACTS, "--out", str(out)])
    assert status == 0
    doc = json.loads(out.read_text())
    raw = read_json(SUMMARY)
    assert doc["provenance"] == "imported"
    assert doc["points"][0]["latency_ms"]["ttft"]["p99"] == raw["p99_ttft"] * 1000
    assert doc["deployment"]["parallelism"] == {"tp": 8}


def test_it_reads_facts_from_a_yaml_file_and_flags_win(tmp_path):
    facts = tmp_path / "deployment.yaml"
    facts.write_text(
        "deployment: {accelerator: B200, gpus: 8, engine: {name: vllm, version: 0.15.1},"
        " quantization: {weights: FP8}}\nscenario: {input_tokens: 1024, output_tokens: 128}\n"
    )
    out = tmp_path / "doc.json"
    args = ["import", str(fixture_path(SUMMARY)), "--deployment", str(facts)]
    assert main([*args, "--accelerator", "H200", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["deployment"]["accelerator"] == "H200"
    assert doc["deployment"]["engine"] == {"name": "vllm", "version": "0.15.1"}


def test_it_prints_the_missing_facts_and_exits_2(capsys):
    status = main(["import", str(fixture_path(SUMMARY))])
    assert status == 2
    err = capsys.readouterr().err
    # The file name states GPUs, engine and weights (glm5_fp8_vllm_tp8_...); not the SKU.
    assert "deployment.accelerator" in err and "deployment.gpus" not in err


def test_it_says_when_the_file_does_not_exist(tmp_path, capsys):
    assert main(["import", str(tmp_path / "nope.json"), *FACTS]) == 2
    assert "nope.json" in capsys.readouterr().err


def test_it_prints_many_documents_as_an_array(capsys):
    path = fixture_path("inferencex/supplemental-evals.json")
    assert main(["import", str(path), "--gpus", "tp"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert isinstance(printed, list) and len(printed) == 66


def test_it_takes_companion_records(tmp_path):
    summary = fixture_path("aiperf-0.13.0/llama-server_completions_c4_profile_export_aiperf.json")
    records = fixture_path("aiperf-0.13.0/llama-server_completions_c4_profile_export.jsonl")
    out = tmp_path / "doc.json"
    args = ["import", str(summary), "--records", str(records), "--model", "tiny"]
    facts = ["--accelerator", "CPU", "--gpus", "1", "--engine", "llama.cpp", "--weights", "F16"]
    assert main([*args, *facts, "--out", str(out)]) == 0
    assert len(json.loads(out.read_text())["points"][0]["records"]) == 20


def test_submit_needs_a_token(monkeypatch, capsys):
    monkeypatch.delenv("INFERBOARD_TOKEN", raising=False)
    status = main(["import", str(fixture_path(SUMMARY)), *FACTS, "--submit", "http://x"])
    assert status == 2
    assert "--token" in capsys.readouterr().err


def test_the_submit_url_may_be_the_server_or_its_runs_endpoint():
    assert server_base("http://host:8000/") == "http://host:8000"
    assert server_base("http://host:8000/api/v1/runs/") == "http://host:8000"


def test_it_refuses_a_document_whose_gpus_are_not_its_pools_and_exits_2(tmp_path, capsys):
    from tests.conftest import example

    document = example()
    document["deployment"]["gpus"] = 8
    document["deployment"]["disaggregation"] = {"prefill_gpus": 8, "decode_gpus": 16}
    path = tmp_path / "run.json"
    path.write_text(json.dumps(document))
    # Refused before anything is sent: the server named is never reached.
    args = ["import", str(path), "--submit", "http://127.0.0.1:9", "--token", "t"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "deployment.gpus: is 8" in err and "8 + 16 = 24" in err
