"""CI gates against the server: labelled runs land through the REST API with their labels,
and `--baseline run:ID` / `deployment:FINGERPRINT` read the baseline back from a live server."""

import pytest

from apps.runs.models import Run
from workers.cli import main
from workers.loadgen.gate import EXIT_REGRESSION
from workers.testing.processes import fault_server

pytestmark = pytest.mark.django_db(transaction=True)

BENCH = [
    "--model", "m", "--quiet", "--input-tokens", "20", "--output-tokens", "16",
    "--concurrency", "4", "--requests", "48", "--warmup", "4", "--no-early-stop", "--no-scrape",
    "--accelerator", "MI355X", "--gpus", "8", "--engine", "sglang", "--quantization", "MXFP4",
]  # fmt: skip


def bench(endpoint: str, out, server: str, token: str, *extra: str) -> int:
    args = ["bench", "--endpoint", endpoint, *BENCH, "--out", str(out)]
    return main([*args, "--submit", server, "--token", token, *extra])


def test_labels_are_stored_with_the_run_and_shown_by_the_api(live_server, issued, client, tmp_path):
    with fault_server() as endpoint:
        code = bench(
            endpoint, tmp_path / "run.json", live_server.url, issued.plaintext,
            "--label", "branch=fix/kv", "--label", "commit=abc123", "--label", "unofficial",
        )  # fmt: skip
    assert code == 0
    run = Run.objects.get()
    assert run.labels == {"branch": "fix/kv", "commit": "abc123", "unofficial": "true"}
    detail = client.get(f"/api/v1/runs/{run.pk}").json()
    assert detail["labels"] == run.labels
    fingerprint = run.deployment.fingerprint
    listed = client.get(f"/api/v1/runs?deployment={fingerprint}").json()
    assert [item["id"] for item in listed["items"]] == [run.pk]
    by_id = client.get(f"/api/v1/runs?deployment={run.deployment_id}").json()
    assert by_id["count"] == 1
    assert client.get("/api/v1/runs?deployment=" + "0" * 64).json()["count"] == 0
    refused = client.get("/api/v1/runs?deployment=not-a-fingerprint")
    assert refused.status_code == 422
    assert "deployment" in refused.content.decode()


def test_the_gate_reads_its_baseline_run_from_the_server(live_server, issued, tmp_path):
    with fault_server("--itl-ms", "5") as endpoint:
        assert bench(endpoint, tmp_path / "main.json", live_server.url, issued.plaintext) == 0
        baseline = Run.objects.get()
        code = bench(
            endpoint, tmp_path / "rerun.json", live_server.url, issued.plaintext,
            "--baseline", f"run:{baseline.pk}", "--fail-on-regression", "25",
        )  # fmt: skip
    assert code == 0
    summary = (tmp_path / "rerun.gate.md").read_text()
    assert summary.startswith("## inferboard performance gate: PASS")
    assert f"- **Baseline**: run {baseline.pk}" in summary


def test_a_deployment_baseline_uses_its_official_runs_only(live_server, issued, tmp_path):
    server, token = live_server.url, issued.plaintext
    with fault_server("--itl-ms", "5") as fast:
        assert bench(fast, tmp_path / "a.json", server, token) == 0
        assert bench(fast, tmp_path / "b.json", server, token) == 0
        official = list(Run.objects.order_by("id").values_list("id", flat=True))
        # The deployment's newest run is of another scenario: not a baseline for this one.
        assert bench(fast, tmp_path / "c.json", server, token, "--output-tokens", "8") == 0
    fingerprint = Run.objects.first().deployment.fingerprint
    with fault_server("--itl-ms", "20") as slower:
        # A slow branch's trial run of the same deployment, labelled unofficial: it must
        # not become the baseline that would let the next slow run pass.
        assert bench(slower, tmp_path / "trial.json", server, token, "--label", "unofficial") == 0
        code = bench(
            slower, tmp_path / "pr.json", server, token, "--label", "unofficial",
            "--baseline", f"deployment:{fingerprint}", "--fail-on-regression", "10",
        )  # fmt: skip
    assert code == EXIT_REGRESSION
    summary = (tmp_path / "pr.gate.md").read_text()
    assert summary.startswith("## inferboard performance gate: FAIL")
    newest_first = ", ".join(str(i) for i in reversed(official))
    assert f"(runs {newest_first}) (2 runs: the interval covers run-to-run noise)" in summary
    # The failing run was still stored: the gate decides the build, not what is recorded.
    assert Run.objects.filter(labels__unofficial="true").count() == 2
    assert Run.objects.count() == 5


def test_a_baseline_run_that_does_not_exist_is_a_clear_error(live_server, issued, capsys):
    code = main(
        ["bench", "--endpoint", "http://127.0.0.1:9", *BENCH, "--baseline", "run:999999",
         "--server", live_server.url, "--token", issued.plaintext]
    )  # fmt: skip
    assert code == 2
    assert "/api/v1/runs/999999/document: not found" in capsys.readouterr().err
