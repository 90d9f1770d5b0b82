"""POST /api/v1/imports (multipart) and the worker CLI's --submit, against the real API."""

from __future__ import annotations

import json

import pytest

from apps.runs.models import Point, Run
from tests.apps.imports.files import FIXTURES, H200_FACTS
from workers.importers.cli import main as worker_cli

SUMMARY = FIXTURES / "inferencex" / "glm5_fp8_vllm_tp8_isl1024_osl128_conc4.json"


def upload(client, path, *, auth, deployment: str | None = H200_FACTS, **fields):
    from django.core.files.uploadedfile import SimpleUploadedFile

    data = {"file": SimpleUploadedFile(path.name, path.read_bytes()), **fields}
    if deployment is not None:
        data["deployment"] = SimpleUploadedFile("deployment.yaml", deployment.encode())
    return client.post("/api/v1/imports", data=data, **auth)


@pytest.mark.sqlite_smoke
@pytest.mark.django_db
def test_an_upload_creates_the_run_and_a_reupload_changes_nothing(client, auth):
    first = upload(client, SUMMARY, auth=auth)
    assert first.status_code == 201, first.content
    body = first.json()
    assert body["format"] == "inferencex-summary"
    assert body["created"] == 1
    run_id = body["runs"][0]["id"]
    again = upload(client, SUMMARY, auth=auth)
    assert again.status_code == 200
    assert again.json()["runs"][0]["id"] == run_id
    assert again.json()["runs"][0]["created"] is False
    assert Run.objects.count() == 1

    detail = client.get(f"/api/v1/runs/{run_id}", **auth).json()
    raw = json.loads(SUMMARY.read_text())
    ttft = detail["points"][0]["latency_ms"]["ttft"]
    assert ttft["p99"] == raw["p99_ttft"] * 1000
    assert detail["provenance"] == "imported"


@pytest.mark.django_db
def test_a_malformed_upload_gets_422_naming_the_problem_and_stores_nothing(client, auth, tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_bytes(SUMMARY.read_bytes()[:200])
    response = upload(client, broken, auth=auth, format="inferencex-summary")
    assert response.status_code == 422
    [item] = response.json()["detail"]
    assert item["path"] == "file" and "truncated" in item["message"]
    assert (Run.objects.count(), Point.objects.count()) == (0, 0)


@pytest.mark.django_db
def test_missing_facts_get_422_naming_them(client, auth):
    response = upload(client, SUMMARY, auth=auth, deployment=None)
    assert response.status_code == 422
    assert "deployment.accelerator" in response.json()["detail"][0]["message"]


@pytest.mark.django_db
def test_a_bad_facts_file_gets_422(client, auth):
    response = upload(client, SUMMARY, auth=auth, deployment="deployment: {gpus: many}")
    assert response.status_code == 422
    assert "deployment.gpus" in response.json()["detail"][0]["message"]


@pytest.mark.django_db
def test_an_upload_without_a_token_is_401(client):
    response = upload(client, SUMMARY, auth={})
    assert response.status_code == 401
    assert Run.objects.count() == 0


@pytest.mark.django_db
def test_companion_records_can_be_uploaded(client, auth):
    from django.core.files.uploadedfile import SimpleUploadedFile

    folder = FIXTURES / "aiperf-0.13.0"
    summary = folder / "llama-server_completions_c4_profile_export_aiperf.json"
    records = folder / "llama-server_completions_c4_profile_export.jsonl"
    facts = (
        "model: random-weights-llama\ndeployment: {accelerator: CPU, gpus: 1, "
        "engine: {name: llama.cpp}, quantization: {weights: F16}}\n"
    )
    response = client.post(
        "/api/v1/imports",
        data={
            "file": SimpleUploadedFile(summary.name, summary.read_bytes()),
            "records": [SimpleUploadedFile(records.name, records.read_bytes())],
            "deployment": SimpleUploadedFile("d.yaml", facts.encode()),
        },
        **auth,
    )
    assert response.status_code == 201, response.content
    run_id = response.json()["runs"][0]["id"]
    assert client.get(f"/api/v1/runs/{run_id}", **auth).json()["request_records"] == 20


@pytest.mark.django_db(transaction=True)
def test_the_worker_cli_submits_to_a_running_server(live_server, issued, capsys):
    args = [
        "import", str(SUMMARY), "--accelerator", "H200", "--gpus", "8", "--engine", "vllm",
        "--weights", "FP8", "--input-tokens", "1024", "--output-tokens", "128",
        "--submit", live_server.url, "--token", issued.plaintext,
    ]  # fmt: skip
    assert worker_cli(args) == 0
    assert worker_cli(args) == 0  # the same file again: the same run, nothing new
    first, second = capsys.readouterr().out.splitlines()
    run = Run.objects.get()
    assert first == second == f"submitted: run {run.pk} ({run.idempotency_key})"
    assert run.provenance == "imported"
    assert run.org == issued.token.org
