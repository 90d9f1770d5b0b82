import uuid
from urllib.parse import urlsplit, urlunsplit

import pytest
import redis

from apps.catalog.services import scenario_create
from workers import result_facts

DEPLOYMENT_FACTS = {
    "model": {"name": "test-model", "family": "test"},
    "deployment": {
        "accelerator": "H200",
        "gpus": 8,
        "engine": {"name": "vllm", "version": "0.11.0"},
        "quantization": {"weights": "FP8"},
        "parallelism": {"tp": 8},
    },
}


def jobs_broker_url() -> str:
    """Redis DB 7 on the suite's Redis, kept apart from the cache and other suites."""
    from django.conf import settings

    base = urlsplit(settings.REDIS_URL or "redis://127.0.0.1:6379/0")
    return urlunsplit((base.scheme, base.netloc, "/7", "", ""))


@pytest.fixture
def broker(settings):
    settings.CELERY_BROKER_URL = jobs_broker_url()
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    created: list[str] = []

    class Broker:
        url = settings.CELERY_BROKER_URL

        def pool(self) -> str:
            """A first-party pool of its own (a queue no other test uses)."""
            from apps.jobs.services import pools_first_party_ensure

            name = f"pool.t{uuid.uuid4().hex[:10]}"
            pools_first_party_ensure([name])
            created.append(name)
            return name

        def messages(self, queue: str) -> list[bytes]:
            return client.lrange(queue, 0, -1)

    yield Broker()
    if created:
        client.delete(*created)
    client.close()


@pytest.fixture
def deployment(db):
    from apps.jobs.services import deployment_from_facts

    return deployment_from_facts(**DEPLOYMENT_FACTS)


@pytest.fixture
def scenario(db):
    return scenario_create(
        scenario=result_facts.Scenario(
            name="tiny",
            input_tokens=32,
            output_tokens=8,
            length_spread=0,
            prefix_cache_hit_rate=0,
            dataset="jobs-test",
        )
    )


@pytest.fixture
def endpoint(org, deployment, broker):
    from apps.jobs.services import endpoint_create

    return endpoint_create(
        org=org,
        name="h200-vllm",
        url="http://127.0.0.1:9/",
        deployment=deployment,
        facts=DEPLOYMENT_FACTS,
        pool=broker.pool(),
        api_key="sk-secret-endpoint-key-123",
    )
