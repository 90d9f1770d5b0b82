import uuid

import pytest
import redis
from django.conf import settings
from django.core.cache import cache, caches


def test_the_cache_lives_in_redis_when_redis_url_is_set():
    if not settings.REDIS_URL:
        pytest.fail("REDIS_URL is not set: run the suite with scripts/test")
    key = f"probe-{uuid.uuid4()}"
    cache.set(key, "stored", timeout=30)
    client = redis.Redis.from_url(settings.REDIS_URL)
    assert any(key in name.decode() for name in client.keys(f"*{key}*"))
    assert cache.get(key) == "stored"
    cache.delete(key)


def test_every_backend_object_of_a_process_shares_one_redis_client_layer():
    # Under ASGI each request gets its own backend object; one client layer per object
    # meant a new TCP connection to Redis for every request.
    first, second = caches.create_connection("default"), caches.create_connection("default")
    assert first is not second
    assert first._cache is second._cache
    first.set("shared-client-probe", 1)
    pool = first._cache._get_connection_pool(write=False)
    before = pool._created_connections
    for _ in range(20):
        assert caches.create_connection("default").get("shared-client-probe") == 1
    assert pool._created_connections == before
