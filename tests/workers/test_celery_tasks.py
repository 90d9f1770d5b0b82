"""Real parts end to end: a `celery worker` process on the real Redis, the in-repo streaming
server as the endpoint, and a live Django server taking events and result documents."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import pytest
import redis

from tests.waits import wait_for
from workers.testing.processes import fault_server, free_port, stop

REPO_ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-e2e-secret-key-0042"
FACTS = {
    "model": {"name": "e2e-model"},
    "deployment": {
        "accelerator": "MI355X",
        "gpus": 8,
        "engine": {"name": "sglang", "version": "0.5.4"},
        "quantization": {"weights": "MXFP4"},
        "parallelism": {"tp": 4, "dp": 2},
    },
}
pytestmark = pytest.mark.django_db(transaction=True)


@dataclass
class Worker:
    process: subprocess.Popen[bytes]
    log: Path
    name: str

    def text(self) -> str:
        return self.log.read_text(errors="replace")


@contextlib.contextmanager
def celery_worker(
    queue: str, *, broker_url: str, server_url: str, token: str, pool: str = "solo", **env: str
) -> Iterator[Worker]:
    name = f"w{uuid.uuid4().hex[:6]}"
    log = Path(tempfile.mkstemp(prefix=f"{name}-", suffix=".log")[1])
    environment = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DJANGO_SETTINGS_MODULE", "DATABASE_URL", "CELERY_BROKER_URL"}
    }
    environment.update(
        PYTHONPATH=str(REPO_ROOT),
        INFERBOARD_BROKER_URL=broker_url,
        INFERBOARD_SERVER_URL=server_url,
        INFERBOARD_TOKEN=token,
        **env,
    )
    command = [
        sys.executable, "-m", "celery", "-A", "workers.celery", "worker", "-Q", queue,
        "--pool", pool, "--concurrency", "1", "-n", f"{name}@%h", "--loglevel", "DEBUG",
        "--without-mingle", "--without-gossip", "--without-heartbeat",
    ]  # fmt: skip
    with log.open("wb") as out:
        process = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, cwd=REPO_ROOT, env=environment
        )
    worker = Worker(process, log, name)
    try:
        wait_for(
            lambda: "ready." in worker.text() or process.poll() is not None, 60, "worker start"
        )
        if process.poll() is not None:
            raise AssertionError(f"worker exited:\n{worker.text()[-3000:]}")
        yield worker
    finally:
        stop(process)
        log.unlink(missing_ok=True)


@pytest.fixture
def broker_url(settings) -> Iterator[str]:
    base = urlsplit(settings.REDIS_URL or "redis://127.0.0.1:6379/0")
    url = urlunsplit((base.scheme, base.netloc, "/7", "", ""))
    settings.CELERY_BROKER_URL = url
    yield url


@pytest.fixture
def pools(broker_url) -> Iterator[Callable[[], str]]:
    names: list[str] = []

    def new() -> str:
        from apps.jobs.services import pools_first_party_ensure

        names.append(f"pool.e2e{uuid.uuid4().hex[:8]}")
        pools_first_party_ensure(names[-1:])  # the service's own pool, served by celery_worker
        return names[-1]

    yield new
    client = redis.Redis.from_url(broker_url)
    if names:
        client.delete(*names)
    client.close()


@dataclass
class Site:
    url: str
    org: Any
    token: str
    scenario: Any


@pytest.fixture
def site(live_server, settings) -> Site:
    """The live server's URL, with a worker token and a tiny scenario."""
    from apps.accounts.services import organization_get_or_create, token_create
    from apps.catalog.services import scenario_create
    from workers import result_facts

    settings.INFERBOARD_PUBLIC_URL = live_server.url
    settings.JOB_HEARTBEAT_TIMEOUT_S = 4
    org = organization_get_or_create(slug="e2e")

    return Site(
        url=live_server.url,
        org=org,
        token=token_create(org=org, name="worker").plaintext,
        scenario=scenario_create(
            scenario=result_facts.Scenario(
                name="e2e",
                input_tokens=24,
                output_tokens=8,
                length_spread=0,
                prefix_cache_hit_rate=0,
                dataset="e2e",
            )
        ),
    )


def make_endpoint(site, url: str, pool: str, name: str = "e2e"):
    from apps.jobs.services import deployment_from_facts, endpoint_create

    return endpoint_create(
        org=site.org,
        name=name,
        url=url,
        deployment=deployment_from_facts(**FACTS),
        facts=FACTS,
        pool=pool,
        api_key=KEY,
    )


def enqueue(site, endpoint, **options):
    from apps.jobs.services import job_enqueue

    return job_enqueue(
        endpoint=endpoint,
        scenario=site.scenario,
        options={"concurrency": [1, 2], "requests": 4, **options},
    )


def finished(job):
    job.refresh_from_db()
    return job.status in ("succeeded", "failed", "cancelled")


def runs_with_key(key: str) -> int:
    from apps.runs.models import Run

    return Run.objects.filter(idempotency_key=key).count()


def test_a_job_runs_on_a_real_worker_and_lands_as_a_run(site, pools, broker_url):
    from apps.jobs.crypto import job_binding_secret

    pool = pools()
    with (
        fault_server("--itl-ms", "1") as endpoint_url,
        celery_worker(pool, broker_url=broker_url, server_url=site.url, token=site.token) as w,
    ):
        endpoint = make_endpoint(site, endpoint_url, pool)
        job = enqueue(site, endpoint)
        wait_for(lambda: finished(job), 120, "the job to finish")
        log = w.text()
    assert job.status == "succeeded", (job.error, log[-3000:])
    run = job.run
    assert run.idempotency_key == job.idempotency_key
    assert run.provenance == "measured"
    # The document came back with its job's secret: scheduled, on the service's own fleet.
    assert (run.origin, run.origin_host) == ("scheduled", "first_party")
    assert run.deployment == endpoint.deployment  # same facts, same fingerprint
    assert run.scenario == site.scenario
    assert [p.concurrency for p in run.points.all()] == [1, 2]
    assert all(p.requests_succeeded == 4 for p in run.points.all())
    assert job.worker.startswith(f"{w.name}@")
    assert job.started_at and job.heartbeat_at and job.finished_at
    # The worker logged the task at DEBUG level and still never the endpoint's key.
    assert f"inferboard.run_load[{job.task_id}]" in log
    assert KEY not in log
    assert job_binding_secret(job.idempotency_key, job.attempt) not in log


def test_an_accuracy_job_runs_its_protocol_and_lands_scored(site, pools, broker_url):
    from apps.jobs.services import job_enqueue

    pool = pools()
    with (
        fault_server() as endpoint_url,
        celery_worker(pool, broker_url=broker_url, server_url=site.url, token=site.token) as w,
    ):
        endpoint = make_endpoint(site, endpoint_url, pool)
        job = job_enqueue(
            endpoint=endpoint, kind="accuracy", protocol="gsm8k-5shot-v1", options={"limit": 3}
        )
        wait_for(lambda: finished(job), 120, "the accuracy job")
        log = w.text()
    assert job.status == "succeeded", (job.error, log[-3000:])
    results = list(job.run.accuracy_results.all())
    assert results and {r.protocol for r in results} == {"gsm8k-5shot-v1"}
    # The test server answers 'tok tok ...': every item is scored, none correct.
    assert all(r.n == 3 and r.score == 0 for r in results)


def test_the_task_time_limit_fails_a_wedged_job_on_a_prefork_worker(site, pools, broker_url):
    pool = pools()
    with (
        fault_server("--mode", "stall") as endpoint_url,
        celery_worker(
            pool,
            broker_url=broker_url,
            server_url=site.url,
            token=site.token,
            pool="prefork",
            INFERBOARD_TASK_TIME_LIMIT_S="6",
        ) as w,
    ):
        job = enqueue(site, make_endpoint(site, endpoint_url, pool))
        wait_for(lambda: finished(job), 60, "the time limit")
        log = w.text()
    assert job.status == "failed", log[-3000:]
    assert "SoftTimeLimitExceeded" in job.error
    assert runs_with_key(job.idempotency_key) == 0


def test_a_job_spec_the_worker_cannot_read_fails_the_job_without_logging_the_key(
    site, pools, broker_url
):
    from apps.jobs.broker import publish
    from apps.jobs.models import Job
    from apps.jobs.specs import job_spec

    pool = pools()
    endpoint = make_endpoint(site, "http://127.0.0.1:9/", pool)
    job = Job.objects.create(
        endpoint=endpoint, scenario=site.scenario, idempotency_key=Job.new_key(), pool=pool
    )
    spec = {**job_spec(job), "version": 3, "feature_from_the_future": True}
    with celery_worker(pool, broker_url=broker_url, server_url=site.url, token=site.token) as w:
        publish("inferboard.run_load", spec, queue=pool, task_id=job.task_id, label="(v2)")
        wait_for(lambda: finished(job), 60, "the job to fail")
        log = w.text()
    assert job.status == "failed"
    assert "cannot read the job" in job.error and "version" in job.error
    assert KEY not in log and KEY not in job.error


def test_a_job_waits_in_the_queue_while_the_server_is_unreachable(site, pools, broker_url):
    pool = pools()
    with fault_server("--itl-ms", "1") as endpoint_url:
        job = enqueue(site, make_endpoint(site, endpoint_url, pool))
        dead = f"http://127.0.0.1:{free_port()}"
        with celery_worker(
            pool,
            broker_url=broker_url,
            server_url=dead,
            token=site.token,
            INFERBOARD_SERVER_ATTEMPTS="1",
        ) as lost:
            wait_for(lambda: lost.text().count("requeued") >= 2, 60, "requeues")
        job.refresh_from_db()
        assert job.status == "queued"
        with celery_worker(pool, broker_url=broker_url, server_url=site.url, token=site.token):
            wait_for(lambda: finished(job), 120, "the job once the server answers")
    assert job.status == "succeeded"
    assert runs_with_key(job.idempotency_key) == 1


def test_jobs_for_two_pools_reach_only_their_own_workers(site, pools, broker_url):
    pool_a, pool_b, pool_idle = pools(), pools(), pools()
    with (
        fault_server("--itl-ms", "1") as endpoint_url,
        celery_worker(pool_a, broker_url=broker_url, server_url=site.url, token=site.token) as a,
        celery_worker(pool_b, broker_url=broker_url, server_url=site.url, token=site.token) as b,
    ):
        job_a = enqueue(site, make_endpoint(site, endpoint_url, pool_a, "a"))
        job_b = enqueue(site, make_endpoint(site, endpoint_url, pool_b, "b"))
        job_idle = enqueue(site, make_endpoint(site, endpoint_url, pool_idle, "idle"))
        wait_for(lambda: finished(job_a) and finished(job_b), 120, "both jobs")
    assert (job_a.status, job_b.status) == ("succeeded", "succeeded")
    assert job_a.worker.startswith(f"{a.name}@")
    assert job_b.worker.startswith(f"{b.name}@")
    job_idle.refresh_from_db()
    assert job_idle.status == "queued"  # no worker listens on its pool
    assert len(redis.Redis.from_url(broker_url).lrange(pool_idle, 0, -1)) == 1


def _kill_mid_job(site, pool, broker_url, endpoint_url):
    """Start a job against a holding fault server, kill -9 its worker while the server holds
    its first stream (so the job cannot have finished), release the server; return the job."""
    endpoint = make_endpoint(site, endpoint_url, pool)
    job = enqueue(site, endpoint, concurrency=[1])
    with celery_worker(pool, broker_url=broker_url, server_url=site.url, token=site.token) as w:
        assert httpx.get(endpoint_url + "/control/held?n=1", timeout=120).status_code == 200
        os.kill(w.process.pid, signal.SIGKILL)
        w.process.wait(timeout=10)
    job.refresh_from_db()
    # The worker reports "started" before it sends a request, so the job is running.
    assert job.status == "running" and job.worker.startswith(f"{w.name}@")
    httpx.post(endpoint_url + "/control/release", timeout=30).raise_for_status()
    return job


def test_a_redelivered_job_after_kill_9_completes_once(site, pools, broker_url, settings):
    pool = pools()
    with fault_server("--hold") as endpoint_url:
        job = _kill_mid_job(site, pool, broker_url, endpoint_url)
        # The lost worker's heartbeats count as stale at once, instead of after a wait on the
        # clock: the takeover rule is what this test is about, not the timeout's length.
        settings.JOB_HEARTBEAT_TIMEOUT_S = 0
        with celery_worker(
            pool,
            broker_url=broker_url,
            server_url=site.url,
            token=site.token,
            INFERBOARD_VISIBILITY_TIMEOUT_S="1",
        ) as w2:
            wait_for(lambda: finished(job), 120, "the redelivered job")
            log = w2.text()
    assert job.status == "succeeded", (job.error, log[-3000:])
    assert job.attempt == 1  # the same message, redelivered: no retry was asked for
    assert job.worker.startswith(f"{w2.name}@")
    assert runs_with_key(job.idempotency_key) == 1


def test_a_job_killed_with_its_worker_is_failed_by_the_reaper_then_retried_once(
    site, pools, broker_url, settings
):
    from django.utils import timezone

    from apps.jobs.services import job_retry, jobs_reap_stale

    pool = pools()
    with fault_server("--hold") as endpoint_url:
        job = _kill_mid_job(site, pool, broker_url, endpoint_url)
        # The reaper runs as if the timeout had passed, rather than racing the clock to it.
        later = timezone.now() + timedelta(seconds=settings.JOB_HEARTBEAT_TIMEOUT_S + 1)
        assert jobs_reap_stale(now=later) == 1
        job.refresh_from_db()
        assert job.status == "failed"
        assert "no heartbeat" in job.error
        assert runs_with_key(job.idempotency_key) == 0
        job_retry(job=job)
        # The new worker first gets the lost attempt's message back and must skip it.
        with celery_worker(
            pool,
            broker_url=broker_url,
            server_url=site.url,
            token=site.token,
            INFERBOARD_VISIBILITY_TIMEOUT_S="1",
        ) as w2:
            wait_for(lambda: finished(job), 120, "the retried job")
            # The broker hands the lost attempt's message back when its visibility timeout
            # has passed and the worker's next restore cycle runs, which may come after
            # attempt 2 has finished. The event waited on is the worker turning it away.
            wait_for(
                lambda: "superseded by attempt 2" in w2.text(),
                120,
                "the lost attempt's message to come back and be turned away",
            )
            log = w2.text()
    assert job.status == "succeeded", (job.error, log[-3000:])
    assert job.attempt == 2
    assert runs_with_key(job.idempotency_key) == 1
    # The message turned away was the lost attempt's own.
    assert f"[{job.idempotency_key}:1] received" in log


def test_cancelling_a_running_job_stops_it_without_a_run(site, pools, broker_url):
    from apps.jobs.services import job_cancel

    pool = pools()
    with fault_server("--itl-ms", "20") as endpoint_url:
        endpoint = make_endpoint(site, endpoint_url, pool)
        job = enqueue(site, endpoint, concurrency=[1], requests=200)
        with celery_worker(pool, broker_url=broker_url, server_url=site.url, token=site.token):
            wait_for(lambda: finished(job) or job.status == "running", 60, "the job to start")
            job_cancel(job=job)
            wait_for(lambda: finished(job) and job.progress == "stopped", 60, "the stop")
    assert job.status == "cancelled"
    assert runs_with_key(job.idempotency_key) == 0


@pytest.fixture
def own_redis(tmp_path) -> Iterator[Callable[[], str]]:
    """A private redis-server with an append-only file, restartable without touching the
    machine's Redis."""
    port = free_port()
    processes: list[subprocess.Popen[bytes]] = []

    def start() -> str:
        process = subprocess.Popen(
            [
                "redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir",
                str(tmp_path), "--appendonly", "yes", "--appendfsync", "always", "--save", "",
            ],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        processes.append(process)
        client = redis.Redis(port=port)
        wait_for(lambda: _pings(client), 20, "redis-server")
        return f"redis://127.0.0.1:{port}/0"

    def restart() -> str:
        stop(processes[-1])
        return start()

    start.restart = restart  # type: ignore[attr-defined]
    yield start
    for process in processes:
        stop(process)


def _pings(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.ConnectionError:
        return False


def test_a_redis_restart_loses_no_queued_job(site, own_redis, settings):
    from apps.jobs.services import pools_first_party_ensure

    url = own_redis()
    settings.CELERY_BROKER_URL = url
    pools_first_party_ensure(["pool.restart"])
    with fault_server("--itl-ms", "1") as endpoint_url:
        job = enqueue(site, make_endpoint(site, endpoint_url, "pool.restart"))
        url = own_redis.restart()
        with celery_worker("pool.restart", broker_url=url, server_url=site.url, token=site.token):
            wait_for(lambda: finished(job), 120, "the job queued before the restart")
    assert job.status == "succeeded"
    assert runs_with_key(job.idempotency_key) == 1


def test_the_worker_side_never_imports_django_or_the_server():
    code = (
        "import sys, workers.celery, workers.tasks, workers.submit\n"
        "bad = [m for m in sys.modules if m.startswith(('apps', 'django.db', 'django.conf'))]\n"
        "print(bad); sys.exit(1 if bad else 0)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, env=env, capture_output=True, timeout=60
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.fixture
def scripted_server() -> Iterator[tuple[str, list[tuple[int, str]], list[bytes]]]:
    """A loopback HTTP server answering from a script of (status, body); records bodies."""
    import http.server
    import threading

    script: list[tuple[int, str]] = []
    seen: list[bytes] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the http.server API
            seen.append(self.rfile.read(int(self.headers["Content-Length"])))
            status, body = script.pop(0)
            self.send_response(status)
            if status in (301, 302, 307, 308):
                self.send_header("Location", "https://elsewhere.example/api")
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", script, seen
    server.shutdown()
    server.server_close()


def _document(key: str):
    from tests.conftest import example
    from workers.results import parse_document

    data = example()
    data["idempotency_key"] = key
    return parse_document(data)


def test_submission_retries_server_errors_with_the_same_document(scripted_server):
    from workers.submit import ServerClient

    url, script, seen = scripted_server
    script += [(503, "{}"), (502, "{}"), (201, '{"id": 7}')]
    client = ServerClient(url, "ib_token", backoff_s=0.01)
    assert client.submit(_document("job:retry-1")) == 7
    assert len(seen) == 3 and seen[0] == seen[1] == seen[2]
    assert b'"idempotency_key":"job:retry-1"' in seen[0].replace(b" ", b"")


def test_submission_gives_up_at_once_on_a_refusal_or_a_redirect(scripted_server):
    from workers.submit import ServerClient, ServerError, ServerRefused

    url, script, seen = scripted_server
    client = ServerClient(url, "ib_token", backoff_s=0.01, attempts=2)
    script.append((422, '{"detail": [{"path": "points", "message": "required"}]}'))
    with pytest.raises(ServerRefused, match="HTTP 422"):
        client.submit(_document("job:refused-1"))
    script.append((301, ""))
    with pytest.raises(ServerRefused, match="INFERBOARD_SERVER_URL"):
        client.event(1, "started", attempt=1, worker="w")
    script += [(500, "{}"), (500, "{}")]
    with pytest.raises(ServerError, match="after 2 attempts"):
        client.event(1, "heartbeat", attempt=1, worker="w")
    assert len(seen) == 4


def test_a_worker_without_a_token_refuses_to_start(broker_url):
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"INFERBOARD_TOKEN", "DJANGO_SETTINGS_MODULE", "CELERY_BROKER_URL"}
    }
    env.update(PYTHONPATH=str(REPO_ROOT), INFERBOARD_BROKER_URL=broker_url)
    command = [sys.executable, "-m", "celery", "-A", "workers.celery", "worker", "-Q", "pool.none"]
    result = subprocess.run(
        [*command, "--pool", "solo"], cwd=REPO_ROOT, env=env, capture_output=True, timeout=120
    )
    assert result.returncode != 0
    assert b"INFERBOARD_TOKEN is not set" in result.stdout + result.stderr


def test_a_job_measures_a_real_llama_server_and_lands_as_a_run(site, pools, broker_url, tmp_path):
    from workers.testing.llama_server import llama_server
    from workers.testing.tiny_model import write_tiny_model

    pool = pools()
    model = write_tiny_model(tmp_path / "tiny.gguf")
    with (
        llama_server(model, slots=2, context=2 * 4096) as endpoint_url,
        celery_worker(pool, broker_url=broker_url, server_url=site.url, token=site.token) as w,
    ):
        endpoint = make_endpoint(site, endpoint_url, pool, name="llama-server")
        job = enqueue(site, endpoint)
        wait_for(lambda: finished(job), 180, "the job to finish")
        log = w.text()
    assert job.status == "succeeded", (job.error, log[-3000:])
    points = list(job.run.points.order_by("ordinal"))
    assert [p.concurrency for p in points] == [1, 2]
    assert all(p.requests_succeeded == 4 and p.output_tok_s > 0 for p in points)
    # llama-server reports usage, so token counts come from the server, not from a guess.
    assert {p.token_count_source for p in points} == {"usage"}
    # The prompts' seed is recorded, as the CLI records it, so a run can be repeated.
    assert job.run.environment["extra"]["seed"] == job.options["seed"]


def test_a_load_job_whose_prompts_cannot_match_the_scenario_fails_before_measuring():
    import threading

    from workers.result_facts import Scenario
    from workers.tasks import Progress, measure_load

    with fault_server() as url:
        spec = _load_spec(url)
        # Two tokens of which half are a shared prefix: no prompt can be that short.
        spec.scenario = Scenario(
            input_tokens=2, output_tokens=4, prefix_cache_hit_rate=0.5, length_spread=0
        )
        progress = Progress()
        with pytest.raises(ValueError, match="miss their input length"):
            measure_load(spec, progress=progress, cancel=threading.Event())
    assert progress.text == "verifying prompt lengths"


def _load_spec(url: str):
    from workers.result_facts import Deployment, Engine, ModelInfo, Quantization, Scenario
    from workers.tasks import EndpointSpec, JobSpec, LoadSpec

    return JobSpec(
        job_id=1,
        idempotency_key="k",
        kind="load",
        server_url="http://127.0.0.1:9",
        endpoint=EndpointSpec(url=url, served_model="m"),
        model=ModelInfo(name="m"),
        deployment=Deployment(
            accelerator="H200",
            gpus=1,
            engine=Engine(name="e"),
            quantization=Quantization(weights="BF16"),
        ),
        scenario=Scenario(input_tokens=64, output_tokens=4, length_spread=0),
        load=LoadSpec(concurrency=[1], requests=3),
    )


def _job_error(url: str) -> str:
    import threading

    from workers.tasks import Progress, describe_failure, measure

    with pytest.raises(Exception) as failure:
        measure(_load_spec(url), progress=Progress(), cancel=threading.Event())
    return describe_failure(failure.value)


def test_a_job_error_names_a_refused_redirect_but_never_its_location(scripted_server):
    url, script, _ = scripted_server
    # The scripted server's redirects point at https://elsewhere.example/api.
    script += [(302, "Redirecting to https://elsewhere.example/api")] * 8
    error = _job_error(url)
    assert error.startswith("redirect refused"), error
    assert "elsewhere" not in error and "Location" not in error


def test_a_job_error_says_the_endpoint_refused_without_the_client_s_probe_text():
    port = free_port()  # nothing listens there
    error = _job_error(f"http://127.0.0.1:{port}")
    assert error == "endpoint refused the connection"
