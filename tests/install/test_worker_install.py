"""The worker as a GPU host installs it (the wheel alone, no extras) runs every command.

Each command runs from the fresh venv, outside the checkout: `bench` against the in-repo
streaming server, `eval` against llama-server, `import` on a peer file, and a Celery
worker for a pool until it reports ready.
"""

from __future__ import annotations

import json
import selectors
import subprocess
import time
import uuid
from pathlib import Path

import pytest
import redis

from tests.install.conftest import Venv
from workers.results import parse_document
from workers.testing.llama_server import llama_server
from workers.testing.processes import REPO_ROOT, fault_server, stop
from workers.testing.tiny_model import write_tiny_model

SERVER_ONLY = {"django", "django-ninja", "django-htmx", "psycopg", "psycopg-binary", "plotly"}
FACTS = ["--accelerator", "MI355X", "--gpus", "8", "--engine", "sglang"]
PEER_FILE = REPO_ROOT / "tests/fixtures/peer-results/inferencex"
PEER_FILE = PEER_FILE / "glm5_fp8_vllm_tp8_isl1024_osl128_conc64.json"


def worker(venv: Venv, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(venv.bin / "inferboard-worker"), *args],
        cwd=cwd,
        env=venv.env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def test_the_worker_install_has_no_django_database_driver_or_plotly(worker_venv):
    installed = worker_venv.distributions()
    assert {"inferboard", "aiohttp", "httpx", "celery", "pydantic"} <= installed
    assert installed & SERVER_ONLY == set()


def test_the_worker_install_cannot_import_the_server(worker_venv, tmp_path):
    # A GPU host has no Django: the worker package must not need it, and does not get it.
    done = subprocess.run(
        [str(worker_venv.bin / "python"), "-c", "import django"],
        cwd=tmp_path,
        env=worker_venv.env(),
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0 and "No module named 'django'" in done.stderr


@pytest.mark.django_db(transaction=True)
def test_bench_from_the_worker_install_measures_and_submits(
    worker_venv, tmp_path, live_server, issued
):
    from apps.runs.models import Run

    out = tmp_path / "run.json"
    with fault_server() as endpoint:
        worker(
            worker_venv, tmp_path, "bench", "--endpoint", endpoint, "--model", "m", "--quiet",
            "--input-tokens", "32", "--output-tokens", "8", "--concurrency", "1,2",
            "--requests", "4", "--no-early-stop", *FACTS, "--quantization", "MXFP4",
            "--out", str(out), "--submit", live_server.url, "--token", issued.plaintext,
        )  # fmt: skip
    document = parse_document(out.read_text())
    assert [p.concurrency for p in document.points] == [1, 2]
    assert all(p.requests.succeeded == 4 for p in document.points)
    run = Run.objects.get()
    assert (run.provenance, run.idempotency_key) == ("measured", document.idempotency_key)


def test_eval_from_the_worker_install_runs_against_llama_server(worker_venv, tmp_path):
    # The model is written with the dev venv (gguf is a dev dependency) and handed over.
    (tmp_path / "model").mkdir()
    model = write_tiny_model(tmp_path / "model" / "tiny.gguf")
    out = tmp_path / "eval.json"
    with llama_server(model, slots=2, context=2 * 8192) as endpoint:
        done = subprocess.run(
            [str(worker_venv.bin / "inferboard-worker"), "eval", "--endpoint", endpoint,
             "--model", "tiny", "--protocol", "gsm8k", "--limit", "2", "--concurrency", "2",
             "--no-progress", "--out", str(out), *FACTS, "--quantization", "F32"],
            cwd=tmp_path, env=worker_venv.env(), capture_output=True, text=True, timeout=600,
        )  # fmt: skip
    # Exit 1 means every item failed, which a random model may do; the document is the point.
    assert done.returncode in (0, 1), done.stderr[-3000:]
    document = parse_document(out.read_text())
    [result] = [r for r in document.accuracy if r.metric == "exact_match_numeric"]
    assert len(result.items) == 2 and document.provenance == "measured"


def test_import_from_the_worker_install_converts_a_peer_file(worker_venv, tmp_path):
    out = tmp_path / "doc.json"
    worker(
        worker_venv, tmp_path, "import", str(PEER_FILE), "--accelerator", "H200", "--gpus", "8",
        "--engine", "vllm", "--weights", "FP8", "--tp", "8", "--input-tokens", "1024",
        "--output-tokens", "128", "--out", str(out),
    )  # fmt: skip
    document = json.loads(out.read_text())
    assert document["provenance"] == "imported"
    assert document["deployment"]["accelerator"] == "H200"


def test_a_celery_worker_from_the_worker_install_starts_for_its_pool(worker_venv, tmp_path):
    from django.conf import settings

    pool = f"pool.install{uuid.uuid4().hex[:8]}"
    broker = settings.REDIS_URL or "redis://127.0.0.1:6379/0"
    # The command deploy/systemd/inferboard-worker@.service runs.
    process = subprocess.Popen(
        [str(worker_venv.bin / "celery"), "-A", "workers.celery", "worker", "-Q", pool,
         "--pool", "prefork", "--concurrency", "1", "-n", f"{pool}@%h", "--loglevel", "INFO",
         "--without-gossip", "--without-mingle"],
        cwd=tmp_path,
        # What deploy/worker.env.example gives it: the broker, the server's URL and a token.
        env=worker_venv.env(
            CELERY_BROKER_URL=broker,
            INFERBOARD_SERVER_URL="http://127.0.0.1:9",
            INFERBOARD_TOKEN="ib_install-test-token",
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )  # fmt: skip
    lines: list[str] = []
    try:
        assert process.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            # A bound on a failure only: the loop ends at the "ready." line.
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and not any("ready." in ln for ln in lines):
                if not selector.select(timeout=deadline - time.monotonic()):
                    break
                line = process.stdout.readline()
                if not line:
                    break
                lines.append(line)
        output = "".join(lines)
        assert any("ready." in ln for ln in lines), output[-3000:]
        assert pool in output and "inferboard.run_load" in output
    finally:
        stop(process)
        client = redis.Redis.from_url(broker)
        client.delete(pool, *client.keys(f"*{pool}*"))
        client.close()
