"""The CI gate of `inferboard-worker bench` (--baseline, --fail-on-regression, --label) end
to end against the fault server process: a rerun of the same server passes, a server made
slower (its --itl-ms delay) fails, and the Markdown summary says why."""

from __future__ import annotations

import json
from pathlib import Path

from tests.workers.loadgen.test_cli import bench
from workers.loadgen.gate import EXIT_REGRESSION
from workers.results import parse_document

# Every request takes its inter-token delays (16 tokens), so a level's throughput is the
# server's doing, not this (shared) machine's CPU.
LOAD = [
    "--input-tokens", "20", "--output-tokens", "16", "--concurrency", "4",
    "--requests", "48", "--warmup", "4", "--no-early-stop", "--no-scrape",
]  # fmt: skip


def test_a_rerun_of_the_same_server_passes_the_gate(start_fault_server, tmp_path: Path):
    url = start_fault_server("--itl-ms", "5")
    baseline = tmp_path / "baseline.json"
    assert bench(url, baseline, *LOAD) == 0
    summary = tmp_path / "gate.md"
    out = tmp_path / "rerun.json"
    code = bench(
        url, out, *LOAD, "--baseline", str(baseline), "--fail-on-regression", "25",
        "--summary", str(summary), "--label", "branch=main",
    )  # fmt: skip
    assert code == 0
    text = summary.read_text()
    assert text.startswith("## inferboard performance gate: PASS")
    assert "| c=4 | **output tok/s/GPU** |" in text
    assert "`branch=main`" in text
    assert "Regression" not in text


def test_a_server_made_slower_fails_the_gate_with_the_summary_written(
    start_fault_server, tmp_path: Path, capsys
):
    baseline = tmp_path / "baseline.json"
    assert bench(start_fault_server("--itl-ms", "5"), baseline, *LOAD) == 0
    slower = start_fault_server("--itl-ms", "20")
    out = tmp_path / "pr.json"
    code = bench(
        slower, out, *LOAD, "--baseline", str(baseline), "--fail-on-regression", "10",
        "--label", "pr=123", "--label", "unofficial",
    )  # fmt: skip
    assert code == EXIT_REGRESSION
    summary = (tmp_path / "pr.gate.md").read_text()  # the default place, beside --out
    assert summary.startswith("## inferboard performance gate: FAIL")
    assert "> **Regression at c=4**: this run's output tok/s/GPU is" in summary
    assert "lower [" in summary
    err = capsys.readouterr().err
    assert "performance regression beyond 10%" in err
    # The run itself is kept and carries its labels, whatever the gate says.
    document = parse_document(out.read_text())
    assert document.labels == {"pr": "123", "unofficial": "true"}


def test_without_a_threshold_the_gate_reports_and_never_fails(start_fault_server, tmp_path):
    baseline = tmp_path / "baseline.json"
    assert bench(start_fault_server("--itl-ms", "5"), baseline, *LOAD) == 0
    out = tmp_path / "pr.json"
    slower = start_fault_server("--itl-ms", "20")
    assert bench(slower, out, *LOAD, "--baseline", str(baseline)) == 0
    summary = (tmp_path / "pr.gate.md").read_text()
    assert summary.startswith("## inferboard performance gate: REPORT")
    assert "| worse |" in summary


def test_a_baseline_at_other_load_levels_is_a_clear_error(start_fault_server, tmp_path, capsys):
    url = start_fault_server()
    baseline = tmp_path / "baseline.json"
    assert bench(url, baseline, *LOAD) == 0
    other = [*LOAD]
    other[other.index("--concurrency") + 1] = "2"
    code = bench(url, tmp_path / "pr.json", *other, "--baseline", str(baseline))
    assert code == 2
    assert "no load level of this run" in capsys.readouterr().err


def test_bad_gate_flags_fail_before_anything_is_measured(tmp_path, capsys):
    # Nothing listens on this endpoint: a flag error must come first.
    dead = "http://127.0.0.1:9"
    cases = {
        ("--fail-on-regression", "5"): "--fail-on-regression needs --baseline",
        ("--baseline", "run:abc"): "a run ID is a number",
        ("--baseline", "nightly"): "no such file, and not run:ID",
        ("--baseline", "run:7"): "needs the server",
        ("--label", "bad key=1"): "--label 'bad key=1'",
        ("--baseline", str(tmp_path / "x.json"), "--fail-on-regression", "-1"): "0 or more",
    }
    (tmp_path / "x.json").write_text(json.dumps({"schema": "inferboard.run/v1"}))
    for flags, message in cases.items():
        assert bench(dead, tmp_path / "out.json", *LOAD, *flags) == 2, flags
        assert message in capsys.readouterr().err, flags
    assert not (tmp_path / "out.json").exists()
