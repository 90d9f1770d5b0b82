"""Finding 1: no endpoint key in anything the broker holds, queued or taken by a worker; a
real Celery worker still runs the job with the key, which it gets when it starts."""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import uuid
from typing import Any

import httpx
import pytest
import redis

from tests.waits import wait_for
from tests.workers.test_celery_tasks import FACTS, celery_worker, enqueue, finished
from workers.testing.processes import fault_server

pytestmark = pytest.mark.django_db(transaction=True)


def _texts(value: Any) -> list[bytes]:
    """Every string in a broker value, and the base64 bodies of Celery messages decoded."""
    if isinstance(value, bytes):
        found = [value]
        with contextlib.suppress(ValueError):
            found += _texts(json.loads(value))
        return found
    if isinstance(value, str):
        found = [value.encode()]
        with contextlib.suppress(binascii.Error, ValueError):
            found.append(base64.b64decode(value, validate=True))
        return found
    if isinstance(value, dict):
        return [t for item in value.values() for t in _texts(item)]
    if isinstance(value, list):
        return [t for item in value for t in _texts(item)]
    return []


def broker_contents(url: str) -> list[bytes]:
    """Everything in the broker's database: queues, unacked messages, bindings, strings."""
    client = redis.Redis.from_url(url)
    values: list[bytes] = []
    for key in client.scan_iter(count=1000):
        kind = client.type(key)
        if kind == b"list":
            values += client.lrange(key, 0, -1)
        elif kind == b"hash":
            values += client.hvals(key)
        elif kind == b"set":
            values += list(client.smembers(key))
        elif kind == b"zset":
            values += client.zrange(key, 0, -1)
        elif kind == b"string":
            values.append(client.get(key) or b"")
    client.close()
    return [text for value in values for text in _texts(value)]


def test_no_message_a_job_leaves_in_redis_holds_the_key_and_a_worker_still_uses_it(
    site, pools, broker_url
):
    from apps.jobs.services import deployment_from_facts, endpoint_create

    key = f"sk-broker-{uuid.uuid4().hex}"
    pool = pools()
    with fault_server("--hold", "--itl-ms", "1", "--api-key", key) as endpoint_url:
        endpoint = endpoint_create(
            org=site.org,
            name="keyed",
            url=endpoint_url,
            deployment=deployment_from_facts(**FACTS),
            facts=FACTS,
            pool=pool,
            api_key=key,
        )
        job = enqueue(site, endpoint, concurrency=[1])
        queued = broker_contents(broker_url)
        assert any(str(job.pk).encode() in text for text in queued)  # the message is there
        assert not [text for text in queued if key.encode() in text]
        with celery_worker(pool, broker_url=broker_url, server_url=site.url, token=site.token) as w:
            # Held mid-stream: the worker has the message (unacked) and the key, both now.
            assert httpx.get(endpoint_url + "/control/held?n=1", timeout=120).status_code == 200
            taken = broker_contents(broker_url)
            assert not [text for text in taken if key.encode() in text]
            httpx.post(endpoint_url + "/control/release", timeout=30).raise_for_status()
            wait_for(lambda: finished(job), 120, "the job to finish")
            log = w.text()
    # The server answers 401 without the key: success means the worker sent it.
    assert job.status == "succeeded", (job.error, log[-3000:])
    assert key not in log


def test_the_key_comes_only_in_the_answer_that_lets_a_worker_start(client, org, auth, db):
    from apps.catalog.services import presets_ensure
    from apps.jobs.models import Job
    from apps.jobs.services import deployment_from_facts, endpoint_create, job_enqueue, pool_create

    presets_ensure()
    pool = pool_create(org=org, name="own-hosts")
    endpoint = endpoint_create(
        org=org,
        name="own",
        url="http://127.0.0.1:9/",
        deployment=deployment_from_facts(**FACTS),
        facts=FACTS,
        pool=pool.name,
        api_key="sk-agent-key-77",
    )
    from apps.catalog.models import Scenario

    job = job_enqueue(endpoint=endpoint, scenario=Scenario.objects.get(slug="single-stream"))
    claim = client.post(f"/api/v1/agent/claim?pool={pool.name}&wait=0", **auth)
    assert claim.status_code == 200
    assert "sk-agent-key-77" not in claim.content.decode()

    def event(name: str, worker: str) -> dict:
        body = {"event": name, "attempt": 1, "worker": worker}
        return client.post(
            f"/api/v1/jobs/{job.pk}/events", body, content_type="application/json", **auth
        ).json()

    started = event("started", "w1")
    assert started["proceed"] is True and started["api_key"] == "sk-agent-key-77"
    # A second worker is turned away, and gets no key.
    elsewhere = event("started", "w2")
    assert elsewhere["proceed"] is False and elsewhere["api_key"] is None
    assert event("heartbeat", "w1")["api_key"] is None
    assert Job.objects.get(pk=job.pk).status == "running"
