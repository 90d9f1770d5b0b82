"""`inferboard-worker bench --submit` lands a run through the real REST API of a live server."""

import pytest

from apps.runs.models import RequestRecord, Run
from workers.cli import main
from workers.testing.processes import REPO_ROOT, fault_server

FIXTURES = REPO_ROOT / "tests" / "fixtures" / "peer-results"

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_measured_run_lands_through_the_api_with_every_request(live_server, issued, tmp_path):
    out = tmp_path / "run.json"
    with fault_server() as endpoint:
        code = main(
            ["bench", "--endpoint", endpoint, "--model", "m", "--quiet",
             "--input-tokens", "32", "--output-tokens", "8", "--concurrency", "1,2",
             "--requests", "4", "--no-early-stop", "--accelerator", "MI355X", "--gpus", "8",
             "--engine", "sglang", "--quantization", "MXFP4", "--tp", "8", "--out", str(out),
             "--submit", live_server.url, "--token", issued.plaintext]
        )  # fmt: skip
    assert code == 0
    run = Run.objects.get()
    assert (run.provenance, run.org_id, run.submitted_by_id) == (
        "measured",
        issued.token.org_id,
        issued.token.pk,
    )
    assert [p.concurrency for p in run.points.order_by("ordinal")] == [1, 2]
    assert RequestRecord.objects.filter(point__run=run).count() == 8
    assert run.deployment.accelerator.sku == "MI355X"


def test_eval_submit_takes_the_servers_base_url_like_bench(live_server, issued, tmp_path):
    # `--submit URL` names the server for every command; eval once posted to URL itself.
    with fault_server() as endpoint:
        code = main(
            ["eval", "--endpoint", endpoint, "--model", "m", "--protocol", "gsm8k",
             "--limit", "3", "--no-progress", "--accelerator", "MI355X", "--gpus", "8",
             "--engine", "sglang", "--quantization", "MXFP4",
             "--submit", live_server.url, "--token", issued.plaintext]
        )  # fmt: skip
    assert code == 0
    run = Run.objects.get()
    assert (run.provenance, run.org_id) == ("measured", issued.token.org_id)
    assert (
        run.accuracy_results.get(protocol__startswith="gsm8k", metric="exact_match_numeric").n == 3
    )


def test_import_submit_takes_the_servers_base_url_like_bench(live_server, issued):
    summary = FIXTURES / "inferencex" / "glm5_fp8_vllm_tp8_isl1024_osl128_conc64.json"
    code = main(
        ["import", str(summary), "--accelerator", "H200", "--gpus", "8", "--engine", "vllm",
         "--weights", "FP8", "--tp", "8", "--input-tokens", "1024", "--output-tokens", "128",
         "--submit", live_server.url + "/", "--token", issued.plaintext]
    )  # fmt: skip
    assert code == 0
    run = Run.objects.get()
    assert (run.provenance, run.deployment.accelerator.sku) == ("imported", "H200")


def test_a_preset_run_lands_under_the_servers_preset_of_that_name(live_server, issued, tmp_path):
    # The CLI's presets are the server's (workers/scenario_presets.py): a run named after one
    # states the shape the server holds for it, so it is stored, not refused with a 422.
    with fault_server() as endpoint:
        code = main(
            ["bench", "--endpoint", endpoint, "--model", "m", "--quiet",
             "--scenario", "single-stream", "--requests", "2", "--no-early-stop",
             "--accelerator", "MI355X", "--gpus", "8", "--engine", "sglang",
             "--quantization", "MXFP4", "--tp", "8", "--out", str(tmp_path / "run.json"),
             "--submit", live_server.url, "--token", issued.plaintext]
        )  # fmt: skip
    assert code == 0
    run = Run.objects.get()
    assert run.scenario.slug == "single-stream"
    assert (run.scenario.input_tokens, run.scenario.output_tokens) == (1024, 1024)
    assert [p.concurrency for p in run.points.order_by("ordinal")] == [1]
