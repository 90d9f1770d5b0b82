"""`inferboard-worker eval` end to end against the scripted server process."""

from __future__ import annotations

import argparse
import json
import socket
from pathlib import Path

import pytest

from workers.accuracy.cli import load_facts, main, register
from workers.results import parse_document

FACTS = ["--accelerator", "H200", "--gpus", "1", "--engine", "llama.cpp", "--quantization", "BF16"]
QUIET = ["--no-progress", *FACTS]


def eval_args(url: str, *extra: str) -> list[str]:
    return ["eval", "--endpoint", url, "--model", "tiny", "--protocol", "gsm8k", *extra]


def test_eval_writes_a_document_shows_progress_and_submits_it(
    scripted_server, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = scripted_server({"default": {"text": "#### 18"}})
    out = tmp_path / "result.json"
    argv = eval_args(server.url, "--limit", "5", "--concurrency", "2", "--out", str(out), *FACTS)
    argv += ["--submit", server.url + "/api/v1/runs", "--token", "secret-token"]
    assert main(argv) == 0
    document = parse_document(out.read_text())
    assert document.provenance == "measured"
    assert document.deployment.accelerator == "H200"
    assert [r.metric for r in document.accuracy] == [
        "exact_match_numeric",
        "em_strict",
        "em_flexible",
    ]
    assert all(r.n == 5 for r in document.accuracy)
    stderr = capsys.readouterr().err
    assert "gsm8k-5shot-v1 [" in stderr and "5/5 correct" in stderr
    assert "exact_match_numeric" in stderr and f"wrote {out}" in stderr
    submissions = [r for r in server.requests() if r["path"] == "/api/v1/runs"]
    assert submissions == [
        {
            "path": "/api/v1/runs",
            "authorization": "Bearer secret-token",
            "schema": "inferboard.run/v1",
            "accuracy": 3,
        }
    ]


def test_the_endpoint_key_comes_from_the_environment(
    scripted_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INFERBOARD_ENDPOINT_API_KEY", "endpoint-key")
    server = scripted_server({"default": {"text": "#### 1"}})
    out = tmp_path / "r.json"
    assert (
        main(eval_args(server.url, "--limit", "1", "--out", str(out), "--no-progress", *FACTS)) == 0
    )
    assert {r["authorization"] for r in server.requests()} == {"Bearer endpoint-key"}


def test_a_run_where_every_request_fails_is_written_and_exits_1(
    scripted_server, tmp_path: Path
) -> None:
    server = scripted_server({"default": {"fail_first": 100, "fail_mode": "503"}})
    out = tmp_path / "r.json"
    argv = eval_args(server.url, "--limit", "2", "--retries", "0", "--out", str(out), *FACTS)
    assert main(argv) == 1
    document = parse_document(out.read_text())
    assert document.status == "failed"
    assert document.accuracy[0].n == 0
    assert document.accuracy[0].failures == {"http_error": 2}


def test_a_refused_submission_exits_3_after_writing_the_file(
    scripted_server, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = scripted_server({"default": {"text": "#### 1"}})
    out = tmp_path / "r.json"
    argv = eval_args(server.url, "--limit", "1", "--out", str(out), "--no-progress", *FACTS)
    argv += ["--submit", server.url + "/api/v1/nowhere", "--token", "t"]
    assert main(argv) == 3
    assert out.exists()
    assert "HTTP 404" in capsys.readouterr().err


def test_missing_deployment_facts_are_refused_before_any_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Port 9 (discard) is never contacted: the facts are checked first.
    argv = eval_args("http://127.0.0.1:9", "--out", str(tmp_path / "r.json"), "--gpus", "1")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "accelerator" in err and "engine" in err and "quantization" in err


def test_data_that_does_not_match_the_protocol_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "mine.jsonl"
    data.write_text('{"question": "1+1?", "answer": "#### 2"}\n' * 7)
    argv = eval_args("http://127.0.0.1:9", "--out", str(tmp_path / "r.json"), "--data", str(data))
    assert main([*argv, *FACTS]) == 2
    err = capsys.readouterr().err
    assert "7 rows" in err and "Refusing to run" in err


def test_a_result_must_go_somewhere(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(eval_args("http://127.0.0.1:9", *FACTS)) == 2
    assert "--out" in capsys.readouterr().err


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="inferboard-worker")
    register(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(argv)


def test_flags_override_the_deployment_file(tmp_path: Path) -> None:
    facts = tmp_path / "deployment.yaml"
    facts.write_text(
        "model: {name: GLM-5.2, family: GLM}\n"
        "deployment:\n"
        "  accelerator: MI355X\n  gpus: 8\n"
        "  engine: {name: sglang, version: 0.5.0}\n"
        "  quantization: {weights: MXFP4}\n"
        "  parallelism: {tp: 8}\n"
    )
    args = parse(
        eval_args("http://h", "--deployment-file", str(facts), "--quantization", "FP8", "--ep", "8")
    )
    model, deployment = load_facts(args)
    assert (model.name, model.family) == ("GLM-5.2", "GLM")
    assert (deployment.accelerator, deployment.gpus, deployment.engine.version) == (
        "MI355X",
        8,
        "0.5.0",
    )
    assert deployment.quantization.weights == "FP8"
    assert (deployment.parallelism.tp, deployment.parallelism.ep) == (8, 8)


def test_register_adds_the_eval_command_to_a_shared_parser() -> None:
    args = parse(eval_args("http://h", *FACTS))
    assert args.command == "eval" and callable(args.func)
    assert (args.protocol, args.concurrency, args.limit) == ("gsm8k", 8, None)


def test_the_written_document_is_plain_json(scripted_server, tmp_path: Path) -> None:
    server = scripted_server({"default": {"text": "#### 1"}})
    out = tmp_path / "r.json"
    assert (
        main(eval_args(server.url, "--limit", "1", "--out", str(out), "--no-progress", *FACTS)) == 0
    )
    raw = json.loads(out.read_text())
    assert raw["schema"] == "inferboard.run/v1"
    assert raw["accuracy"][0]["protocol_hash"].startswith("sha256:")


def test_an_endpoint_where_nothing_listens_is_refused_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as probe:  # a port that was free a moment ago, now closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    out = tmp_path / "r.json"
    assert main(eval_args(f"http://127.0.0.1:{port}", "--out", str(out), *QUIET)) == 2
    assert "cannot reach the endpoint" in capsys.readouterr().err
    assert not out.exists()


def test_an_endpoint_without_a_scheme_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(eval_args("localhost:8000", "--out", "r.json", *QUIET)) == 2
    assert "http://" in capsys.readouterr().err
