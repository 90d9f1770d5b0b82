"""`inferboard-worker bench` end to end against the fault server process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import httpx
import pytest

from tests.workers.loadgen import tokenizer_files
from workers.loadgen.cli import main
from workers.results import parse_document
from workers.testing.processes import REPO_ROOT

DEPLOYMENT = ["--accelerator", "CPU", "--gpus", "1", "--engine", "fault", "--quantization", "none"]


def bench(url: str, out: Path, *extra: str) -> int:
    args = ["bench", "--endpoint", url + "/v1", "--model", "m", "--out", str(out), "--quiet"]
    return main([*args, *DEPLOYMENT, *extra])


def test_it_measures_a_sweep_and_writes_the_document_and_jsonl(start_fault_server, tmp_path):
    url = start_fault_server("--prefix-block", "1")
    out = tmp_path / "run.json"
    code = bench(
        url,
        out,
        "--input-tokens",
        "50",
        "--output-tokens",
        "8",
        "--prefix-hit-rate",
        "0.6",
        "--concurrency",
        "1,2",
        "--requests",
        "6",
        "--no-early-stop",
    )
    assert code == 0
    document = parse_document(out.read_text())
    assert document.provenance == "measured"
    assert document.status == "succeeded"
    assert [p.concurrency for p in document.points] == [1, 2]
    assert document.environment.extra["tokenizer"] == "endpoint"
    for point in document.points:
        assert point.requests.succeeded == 6
        assert point.prompt_length_mismatch_rate == 0
        assert point.prefix_cache_hit_rate == pytest.approx(0.6, abs=0.02)
    lines = (tmp_path / "run.requests.jsonl").read_text().splitlines()
    # 12 measured, plus the prefix warm-up once per concurrent request: 1 + 2.
    assert len(lines) == 15
    assert all(json.loads(line)["target_n_in"] == 50 for line in lines if '"warmup":false' in line)


def test_presets_fill_the_scenario(start_fault_server, tmp_path):
    out = tmp_path / "run.json"
    code = bench(
        start_fault_server(), out, "--scenario", "1k-1k", "--output-tokens", "4", "--requests", "2"
    )
    assert code == 0
    scenario = parse_document(out.read_text()).scenario
    assert scenario.preset == "1k-1k" and scenario.input_tokens == 1024
    assert scenario.output_tokens == 4


def test_missing_deployment_facts_are_a_clear_error(start_fault_server, tmp_path, capsys):
    args = [
        "bench",
        "--endpoint",
        start_fault_server(),
        "--model",
        "m",
        "--input-tokens",
        "5",
        "--output-tokens",
        "2",
        "--requests",
        "1",
        "--out",
        str(tmp_path / "r.json"),
    ]
    assert main(args) == 2
    assert "accelerator" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


def test_deployment_facts_come_from_yaml_and_flags_override_it(start_fault_server, tmp_path):
    yaml_file = tmp_path / "deployment.yaml"
    yaml_file.write_text(
        "accelerator: MI355X\ngpus: 8\nengine: {name: sglang, version: '0.5'}\n"
        "quantization: MXFP4\nparallelism: {tp: 8}\nspeculative: {method: mtp, draft_tokens: 3}\n"
    )
    out = tmp_path / "run.json"
    args = [
        "bench",
        "--endpoint",
        start_fault_server(),
        "--model",
        "m",
        "--quiet",
        "--input-tokens",
        "5",
        "--output-tokens",
        "2",
        "--requests",
        "1",
        "--deployment",
        str(yaml_file),
        "--gpus",
        "4",
        "--out",
        str(out),
    ]
    assert main(args) == 0
    deployment = parse_document(out.read_text()).deployment
    assert deployment.accelerator == "MI355X" and deployment.gpus == 4
    assert deployment.quantization.weights == "MXFP4"
    assert deployment.parallelism.tp == 8 and deployment.speculative.draft_tokens == 3


class _FlakyApi(BaseHTTPRequestHandler):
    calls: list[tuple[str, dict]] = []
    paths: list[str] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _FlakyApi.calls.append((self.headers["Authorization"], body))
        _FlakyApi.paths.append(self.path)
        status = 503 if len(_FlakyApi.calls) == 1 else 201
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"id": 1}')

    def log_message(self, *args: object) -> None:
        pass


def test_submit_retries_with_the_same_idempotency_key(start_fault_server, tmp_path):
    _FlakyApi.calls, _FlakyApi.paths = [], []
    api = HTTPServer(("127.0.0.1", 0), _FlakyApi)
    thread = threading.Thread(target=api.serve_forever, daemon=True)
    thread.start()
    try:
        code = bench(
            start_fault_server(),
            tmp_path / "run.json",
            "--input-tokens",
            "5",
            "--output-tokens",
            "2",
            "--requests",
            "1",
            "--submit",
            f"http://127.0.0.1:{api.server_port}",
            "--token",
            "T",
        )
    finally:
        api.shutdown()
    assert code == 0
    assert _FlakyApi.paths == ["/api/v1/runs", "/api/v1/runs"]
    (auth1, first), (auth2, second) = _FlakyApi.calls
    assert auth1 == auth2 == "Bearer T"
    assert first["idempotency_key"] == second["idempotency_key"]
    parse_document(second)


def test_ctrl_c_keeps_the_finished_levels(start_fault_server, tmp_path):
    # Level c=1 is streams 1 and 2; the server holds stream 3 on, so level c=2 is in flight
    # for as long as the test likes and the interrupt can never race the end of the level.
    url = start_fault_server("--hold-from", "3")
    out = tmp_path / "run.json"
    command = [
        sys.executable,
        "-m",
        "workers.loadgen.cli",
        "bench",
        "--endpoint",
        url,
        "--model",
        "m",
        "--input-tokens",
        "5",
        "--output-tokens",
        "40",
        "--requests",
        "2",
        "--concurrency",
        "1,2",
        "--no-early-stop",
        "--out",
        str(out),
        *DEPLOYMENT,
    ]
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    # A child inherits an ignored SIGINT (and Python then never raises KeyboardInterrupt): a
    # user's Ctrl-C reaches the CLI with the default disposition, so the test starts it so.
    process = subprocess.Popen(
        command,
        stderr=subprocess.PIPE,
        env=env,
        cwd=REPO_ROOT,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        held = httpx.get(url + "/control/held?n=1", timeout=120)
        assert held.status_code == 200 and process.poll() is None
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
        assert process.returncode == 130, stderr.decode(errors="replace")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    document = parse_document(out.read_text())
    assert document.status == "partial"
    assert [p.concurrency for p in document.points] == [1]


def test_prompts_that_cannot_reach_their_length_stop_the_run_before_it_measures(
    start_fault_server, tmp_path, capsys
):
    # Two tokens with a shared prefix: each prompt's code words alone are longer than that.
    out = tmp_path / "run.json"
    args = ["--input-tokens", "2", "--output-tokens", "4", "--prefix-hit-rate", "0.5"]
    code = bench(start_fault_server(), out, *args, "--requests", "3")
    assert code == 2
    error = capsys.readouterr().err
    assert "prompts miss their input length by more than ±1 token" in error
    assert "--allow-length-mismatch" in error
    assert not out.exists()


def test_allowing_a_length_mismatch_measures_and_marks_the_points(
    start_fault_server, tmp_path, capsys
):
    out = tmp_path / "run.json"
    args = ["--input-tokens", "2", "--output-tokens", "4", "--prefix-hit-rate", "0.5"]
    code = bench(start_fault_server(), out, *args, "--requests", "3", "--allow-length-mismatch")
    assert code == 0
    document = parse_document(out.read_text())
    assert document.points[0].prompt_length_mismatch_rate == 1.0
    assert document.environment.extra["prompt_check"]["missed"] == 3
    assert "[LENGTH MISMATCH 100%]" in capsys.readouterr().err


def test_a_tokenizer_that_disagrees_with_the_server_is_caught_by_the_servers_usage(
    start_fault_server, tmp_path, capsys
):
    # The local file splits words into bytes; the server counts words. Prompts fit the file
    # exactly, so only the server's usage shows they are the wrong length.
    tokenizer = tokenizer_files.bytes_only(tmp_path / "tokenizer.json")
    out = tmp_path / "run.json"
    code = bench(
        start_fault_server(),
        out,
        *("--input-tokens", "50", "--output-tokens", "4", "--requests", "3"),
        *("--tokenizer", "local", "--tokenizer-json", str(tokenizer)),
    )
    assert code == 3
    assert "prompts missed their input length" in capsys.readouterr().err
    document = parse_document(out.read_text())
    assert document.environment.extra["tokenizer"] == "tokenizer.json"
    assert document.points[0].prompt_length_mismatch_rate == 1.0
