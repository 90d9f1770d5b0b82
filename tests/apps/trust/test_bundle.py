"""The reproducibility bundle of a run measured here, fed to the command it holds against the
same server, measures a document with the same scenario and deployment fingerprint."""

import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import httpx
import pytest

from apps.runs.models import Run
from workers import results as doc
from workers.cli import main
from workers.testing.processes import REPO_ROOT, fault_server

pytestmark = pytest.mark.django_db(transaction=True)

FACTS = [
    "--accelerator", "MI355X", "--gpus", "8", "--engine", "sglang", "--engine-version", "0.5.4",
    "--image-digest", "sha256:0123abcd", "--quantization", "MXFP4", "--quant-activations",
    "MXFP4", "--quant-kv-cache", "FP8", "--tp", "8", "--engine-flag", "--tp 8",
]  # fmt: skip


def test_the_bundles_command_measures_the_same_scenario_and_deployment_again(
    live_server, issued, tmp_path
):
    with fault_server() as endpoint:
        code = main(
            ["bench", "--endpoint", endpoint, "--model", "bundle-model", "--quiet",
             "--input-tokens", "32", "--output-tokens", "8", "--concurrency", "1,2",
             "--requests", "4", "--no-early-stop", *FACTS, "--out", str(tmp_path / "first.json"),
             "--submit", live_server.url, "--token", issued.plaintext]
        )  # fmt: skip
        assert code == 0
        run = Run.objects.get()
        response = httpx.get(f"{live_server.url}/runs/{run.pk}/bundle.zip", timeout=30)
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/zip"
        folder = tmp_path / "bundle"
        with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
            names = set(archive.namelist())
            archive.extractall(folder)
        here = folder / f"run-{run.pk}"
        assert {f"run-{run.pk}/{n}" for n in (
            "result.json", "requests.jsonl", "scenario.json", "deployment.yaml",
            "server_metrics.json", "reproduce.sh", "README.txt",
        )} == names  # fmt: skip
        script = (here / "reproduce.sh").read_text()
        assert "inferboard-worker bench" in script and "inferboard-loadgen" in script
        assert len((here / "requests.jsonl").read_text().splitlines()) == 8
        hashes = json.loads((here / "scenario.json").read_text())
        assert hashes["deployment_fingerprint"] == run.deployment.fingerprint

        bin_dir = str(Path(sys.executable).parent)  # where inferboard-worker is installed
        env = {**os.environ, "ENDPOINT": endpoint, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
        env["PYTHONPATH"] = str(REPO_ROOT)
        again = subprocess.run(
            ["sh", "reproduce.sh"], cwd=here, env=env, capture_output=True, timeout=300
        )
    assert again.returncode == 0, again.stderr.decode()[-3000:]
    reproduced = doc.parse_document((here / "reproduced.json").read_bytes())
    first = doc.parse_document(json.dumps(run.document))
    assert reproduced.deployment_fingerprint() == first.deployment_fingerprint()
    assert reproduced.deployment_fingerprint() == run.deployment.fingerprint
    assert reproduced.scenario == first.scenario
    assert [p.concurrency for p in reproduced.points] == [1, 2]


def test_a_private_runs_bundle_is_404_to_others(client, org):
    from apps.runs.services import run_ingest
    from tests.factories import document

    run = run_ingest(document=document(), org=org, is_public=False).run
    assert client.get(f"/runs/{run.pk}/bundle.zip").status_code == 404
