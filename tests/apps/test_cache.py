import uuid

import pytest
import redis
from django.conf import settings
from django.core.cache import cache


def test_the_cache_lives_in_redis_when_redis_url_is_set():
    if not settings.REDIS_URL:
        pytest.fail("REDIS_URL is not set: run the suite with scripts/test")
    key = f"probe-{uuid.uuid4()}"
    cache.set(key, "stored", timeout=30)
    client = redis.Redis.from_url(settings.REDIS_URL)
    assert any(key in name.decode() for name in client.keys(f"*{key}*"))
    assert cache.get(key) == "stored"
    cache.delete(key)
