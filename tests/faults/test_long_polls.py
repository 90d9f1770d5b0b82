"""Finding 11: an agent's long poll asks the database when a job may have come (a wake-up
counter in the cache moved), not every half second; polls are bounded per token; wait=nan
is a 422, not a poll that never ends."""

from __future__ import annotations

import threading
import time

import pytest
from django.test import Client

from apps.jobs import api as jobs_api
from apps.jobs import services
from tests.waits import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def agent_pool(org):
    return services.pool_create(org=org, name="agents")


@pytest.fixture
def endpoint_on_it(org, agent_pool):
    from tests.apps.jobs.conftest import DEPLOYMENT_FACTS

    return services.endpoint_create(
        org=org,
        name="own",
        url="http://127.0.0.1:9/",
        deployment=services.deployment_from_facts(**DEPLOYMENT_FACTS),
        facts=DEPLOYMENT_FACTS,
        pool=agent_pool.name,
    )


def poll(auth, pool, wait: float):
    return Client().post(f"/api/v1/agent/claim?pool={pool.name}&wait={wait}", **auth)


@pytest.fixture
def claims(monkeypatch):
    """How many times polls ask the database for a job."""
    counted: list[float] = []
    real = services.job_claim

    def counting(**kwargs):
        counted.append(time.monotonic())
        return real(**kwargs)

    monkeypatch.setattr(services, "job_claim", counting)
    return counted


def test_an_idle_poll_asks_the_database_once_not_every_half_second(auth, agent_pool, claims):
    started = time.monotonic()
    assert poll(auth, agent_pool, 3).status_code == 204
    assert time.monotonic() - started >= 2.9
    assert len(claims) == 1  # the old loop asked 7 times in 3 s


def test_a_job_queued_during_the_poll_wakes_it_at_once(
    auth, agent_pool, endpoint_on_it, claims, settings, monkeypatch
):
    from apps.catalog.services import presets_ensure

    # No periodic recheck within the poll's 20 s: only the wake-up can find the job before
    # the poll ends empty (204).
    monkeypatch.setattr(jobs_api, "AGENT_RECHECK_S", 600.0)

    presets_ensure()
    from apps.catalog.models import Scenario

    answers = []
    waiting = threading.Thread(target=lambda: answers.append(poll(auth, agent_pool, 20)))
    waiting.start()
    wait_for(lambda: claims, 30, "the poll to start waiting")
    services.job_enqueue(
        endpoint=endpoint_on_it, scenario=Scenario.objects.get(slug="single-stream")
    )
    waiting.join(timeout=30)
    assert answers and answers[0].status_code == 200  # the job, not the empty 204 at 20 s
    assert len(claims) == 2


def test_the_periodic_recheck_finds_what_no_wake_up_announced(
    auth, agent_pool, claims, monkeypatch
):
    monkeypatch.setattr(jobs_api, "AGENT_RECHECK_S", 1.0)
    assert poll(auth, agent_pool, 2.6).status_code == 204
    assert 2 <= len(claims) <= 4


def test_polls_are_bounded_per_token(auth, agent_pool, claims, settings):
    settings.AGENT_MAX_POLLS_PER_TOKEN = 1
    first = threading.Thread(target=lambda: poll(auth, agent_pool, 4))
    first.start()
    wait_for(lambda: claims, 30, "the first poll to wait")
    second = poll(auth, agent_pool, 0)
    first.join(timeout=30)
    assert second.status_code == 429 and int(second["Retry-After"]) > 0
    assert poll(auth, agent_pool, 0).status_code == 204  # the first one has ended


@pytest.mark.parametrize("wait", ["nan", "inf"])
def test_a_non_finite_wait_is_a_422(auth, agent_pool, wait):
    # A `nan` wait once made the poll loop forever: the thread's deadline bounds that failure.
    answers = []
    asking = threading.Thread(target=lambda: answers.append(poll(auth, agent_pool, wait)))
    asking.start()
    asking.join(timeout=60)
    assert answers, "the poll with a non-finite wait did not return"
    response = answers[0]
    assert response.status_code == 422 and response.json()["detail"][0]["path"] == "wait"
