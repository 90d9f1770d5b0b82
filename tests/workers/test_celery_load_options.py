"""A scheduled job asks for what the CLI's load flags can, and a real worker runs it so
(workers/loadgen/setup.py): a real `celery worker` process, the in-repo streaming server as
the endpoint, a live Django server. Here `early_stop`: with it off the sweep runs every level
even though the first already misses the scenario's SLO."""

from __future__ import annotations

import uuid

import pytest

from tests.waits import wait_for
from tests.workers import test_celery_tasks as e2e
from tests.workers.test_celery_tasks import celery_worker, enqueue, finished, make_endpoint
from workers.testing.processes import fault_server

pytestmark = pytest.mark.django_db(transaction=True)
broker_url, pools, site = e2e.broker_url, e2e.pools, e2e.site


def test_a_job_that_turns_early_stop_off_runs_every_level(site, pools, broker_url):
    from apps.catalog.services import scenario_create
    from workers import result_facts

    # Every first token takes 30 ms; the SLO asks for 1 ms, so the first level misses it.
    site.scenario = scenario_create(
        scenario=result_facts.Scenario(
            name=f"strict-{uuid.uuid4().hex[:6]}",
            input_tokens=24,
            output_tokens=4,
            length_spread=0,
            prefix_cache_hit_rate=0,
            dataset="e2e",
            slo=result_facts.Slo(ttft_ms=1),
        )
    )
    pool = pools()
    with (
        fault_server("--ttft-ms", "30", "--itl-ms", "1") as endpoint_url,
        celery_worker(pool, broker_url=broker_url, server_url=site.url, token=site.token) as w,
    ):
        endpoint = make_endpoint(site, endpoint_url, pool)
        stopping = enqueue(site, endpoint, concurrency=[1, 2, 4])
        wait_for(lambda: finished(stopping), 120, "the job that stops early")
        every_level = enqueue(site, endpoint, concurrency=[1, 2, 4], early_stop=False)
        wait_for(lambda: finished(every_level), 120, "the job that runs every level")
        log = w.text()
    assert stopping.status == every_level.status == "succeeded", log[-3000:]
    assert [p.concurrency for p in stopping.run.points.all()] == [1]
    assert [p.concurrency for p in every_level.run.points.all()] == [1, 2, 4]
