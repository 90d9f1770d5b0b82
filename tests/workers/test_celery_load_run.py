"""A Celery load job measures as the `bench` CLI does (issue 41, workers/loadgen/measure.py):
against a real llama-server started with --metrics, a real `celery worker` process and a live
Django server, the job's run carries the server's scraped series and the prompt check, and a
job whose prompts miss their length fails with the refusal the CLI gives."""

from __future__ import annotations

import contextlib
import uuid

import pytest

from tests.waits import wait_for
from tests.workers import test_celery_tasks as e2e
from tests.workers.test_celery_tasks import celery_worker, enqueue, finished, make_endpoint
from workers.loadgen.cli import main
from workers.testing.llama_server import llama_server, require
from workers.testing.tiny_model import write_tiny_model

pytestmark = pytest.mark.django_db(transaction=True)
# The real worker, pools, broker and live site of the Celery end-to-end tests.
broker_url, pools, site = e2e.broker_url, e2e.pools, e2e.site


@pytest.fixture
def metrics_server(tmp_path):
    require()
    model = write_tiny_model(tmp_path / "tiny.gguf")
    with llama_server(model, slots=2, context=2 * 4096, extra=("--metrics",)) as url:
        yield url


def assert_scraped_and_checked(run, metrics_server: str) -> None:
    """The run carries llama-server's scraped series on every point and the prompt check."""
    extra = run.environment["extra"]
    assert extra["server_metrics"]["engine"] == "llama.cpp"
    assert extra["server_metrics"]["url"] == f"{metrics_server}/metrics"
    planned = sum(p.requests_total for p in run.points.all())
    assert extra["prompt_check"]["checked"] >= planned > 0
    assert extra["prompt_check"]["missed"] == 0
    assert extra["prompt_check"]["counter"]
    for point in run.document["points"]:
        names = {series["name"] for series in point["server"]["series"]}
        assert "generation_tokens" in names


def test_it_stores_the_servers_scraped_metrics_and_the_prompt_check(
    site, pools, broker_url, metrics_server
):
    pool = pools()
    with celery_worker(pool, broker_url=broker_url, server_url=site.url, token=site.token) as w:
        endpoint = make_endpoint(site, metrics_server, pool, name="llama-server")
        job = enqueue(site, endpoint)
        wait_for(lambda: finished(job), 180, "the job to finish")
        log = w.text()
    assert job.status == "succeeded", (job.error, log[-3000:])
    assert_scraped_and_checked(job.run, metrics_server)


def test_a_job_fanned_out_over_two_workers_stores_the_scrape_and_the_prompt_check(
    site, pools, broker_url, metrics_server, settings
):
    """Each member measures its share as a whole run is measured; member 0 scrapes."""
    settings.JOB_MEMBERS_START_LEAD_S = 8  # two workers on a shared 2-core host calibrate first
    pool = pools()
    with contextlib.ExitStack() as stack:
        workers = [
            stack.enter_context(
                celery_worker(pool, broker_url=broker_url, server_url=site.url, token=site.token)
            )
            for _ in range(2)
        ]
        endpoint = make_endpoint(site, metrics_server, pool, name="llama-server")
        job = enqueue(site, endpoint, members=2, concurrency=[2])
        wait_for(lambda: finished(job), 240, "the two-member job to finish")
        logs = "\n".join(w.text()[-2000:] for w in workers)
    assert job.status == "succeeded", (job.error, logs)
    assert [m["member"] for m in job.run.environment["extra"]["members"]] == [0, 1]
    assert_scraped_and_checked(job.run, metrics_server)


def test_a_job_whose_prompts_miss_their_length_fails_as_the_cli_refuses(
    site, pools, broker_url, metrics_server, tmp_path
):
    from apps.catalog.services import scenario_create
    from apps.runs.models import Run
    from workers import result_facts

    # Two tokens, half of them a shared prefix: no prompt can be that short.
    site.scenario = scenario_create(
        scenario=result_facts.Scenario(
            name=f"too-short-{uuid.uuid4().hex[:6]}",
            input_tokens=2,
            output_tokens=4,
            length_spread=0,
            prefix_cache_hit_rate=0.5,
            dataset="e2e",
        )
    )
    pool = pools()
    with celery_worker(pool, broker_url=broker_url, server_url=site.url, token=site.token) as w:
        endpoint = make_endpoint(site, metrics_server, pool, name="llama-server")
        job = enqueue(site, endpoint)
        wait_for(lambda: finished(job), 180, "the job to finish")
        log = w.text()
    assert job.status == "failed", log[-3000:]
    assert "miss their input length" in job.error
    assert "would not match its scenario" in job.error
    assert not Run.objects.filter(idempotency_key=job.idempotency_key).exists()

    out = tmp_path / "run.json"
    status = main(
        [
            "bench", "--endpoint", metrics_server, "--model", "tiny", "--quiet",
            "--input-tokens", "2", "--output-tokens", "4", "--prefix-hit-rate", "0.5",
            "--concurrency", "1", "--requests", "4",
            "--accelerator", "CPU", "--gpus", "1", "--engine", "llama.cpp",
            "--quantization", "F32", "--out", str(out),
        ]
    )  # fmt: skip
    assert status == 2  # the CLI refuses the same run before measuring
    assert not out.exists()
