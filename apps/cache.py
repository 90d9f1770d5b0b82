"""The cache backend (Redis), and what the site does while Redis does not answer.

Redis holds the page cache, the API's cached run list, the runs version, and the counters of
the write limits (apps.accounts.ratelimit) and of allauth's sign-in limits. None of them is
worth a failed request, so while Redis is unreachable:

- reads miss and writes are skipped: pages and the run list are built from the database;
- counters (keys under COUNTER_PREFIXES) are kept in this process's memory instead, so every
  limit still holds, counted per web process (3 processes: at most 3x a limit) until Redis
  answers again;
- Redis is not tried again for CACHE_RETRY_S seconds after a failure, so an outage costs
  one connect timeout (CACHE_TIMEOUT_S) per process every few seconds, not one per request.

A run that lands during an outage cannot bump the runs version; pages cached before it show
it once their lifetime (10 minutes) ends. `/readyz` names the cache while it is down.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from django.core.cache import caches
from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from django.utils.functional import cached_property
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

log = logging.getLogger(__name__)

# Keys whose values must survive an outage: write-limit and sign-in-limit counters.
COUNTER_PREFIXES = ("ratelimit:", "allauth:rl:")
_MISSING = object()

# Per process, not per backend object: Django makes one backend object per thread, and under
# ASGI a request may get a fresh thread.
_state_lock = threading.Lock()
_down_until: dict[str, float] = {}

# One client layer (and so one set of connection pools) per server and options, per process:
# under ASGI each request gets its own backend object (Django keeps them in an asgiref Local,
# per request context), and a client layer made per object opened a new TCP connection to
# Redis for every request (py-spy: 15% of a cached run-list read was connect()).
_client_layers_lock = threading.Lock()
_client_layers: dict[tuple[str, str], ReusedClientRedisCacheClient] = {}


def _is_counter(key: Any) -> bool:
    return isinstance(key, str) and key.startswith(COUNTER_PREFIXES)


class ReusedClientRedisCacheClient(RedisCacheClient):
    """Django's Redis client layer, keeping one redis.Redis object per connection pool.

    Django builds a new redis.Redis for every command, and redis-py fills each with its ~170
    response callbacks: a third of a cache read's time (bench/api_load.py reads the cache
    up to four times per request). A redis.Redis over a shared pool is thread-safe (and
    redis-py resets a pool it finds in a forked child), so one per pool does the same work."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        index = self._get_connection_pool_index(write)
        client = self._clients.get(index)
        if client is None:
            client = self._client(connection_pool=self._get_connection_pool(write))
            self._clients[index] = client
        return client


class FailSoftRedisCache(RedisCache):
    """Django's RedisCache that degrades instead of raising when Redis is unreachable."""

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        params = dict(params)
        options = dict(params.get("OPTIONS", {}))
        self.retry_s = float(options.pop("RETRY_S", 5.0))
        timeout_s = float(options.pop("TIMEOUT_S", 1.0))
        # Bounded waits: a Redis host that drops packets must not hold a request for long.
        options.setdefault("socket_connect_timeout", timeout_s)
        options.setdefault("socket_timeout", timeout_s)
        params["OPTIONS"] = options
        super().__init__(server, params)
        self._class = ReusedClientRedisCacheClient
        self._name = str(server)
        # Shared by every backend object of the process (LocMemCache keys storage by name).
        self.fallback = LocMemCache(f"inferboard-fallback:{server}", {"OPTIONS": {}})

    @cached_property
    def _cache(self) -> ReusedClientRedisCacheClient:
        shared = (repr(self._servers), repr(sorted(self._options.items())))
        with _client_layers_lock:
            client = _client_layers.get(shared)
            if client is None:
                client = _client_layers[shared] = self._class(self._servers, **self._options)
        return client

    # The circuit breaker ---------------------------------------------------------------------

    def is_down(self) -> bool:
        with _state_lock:
            return time.monotonic() < _down_until.get(self._name, 0.0)

    def _failed(self, exc: Exception) -> None:
        with _state_lock:
            first = time.monotonic() >= _down_until.get(self._name, 0.0)
            _down_until[self._name] = time.monotonic() + self.retry_s
        if first:
            log.warning(
                "cache unreachable (%s: %s): serving uncached, counting limits in memory; "
                "trying again in %.0f s",
                type(exc).__name__,
                exc,
                self.retry_s,
            )

    def _call(self, key: Any, method: str, *args: Any, degraded: Any = None, **kwargs: Any) -> Any:
        """Run `method` on Redis; when it fails (or failed moments ago), on the fallback for a
        counter key, or answer `degraded` for any other key."""
        if not self.is_down():
            try:
                return getattr(super(), method)(key, *args, **kwargs)
            except (RedisConnectionError, RedisTimeoutError) as exc:
                self._failed(exc)
            except RedisError as exc:  # a refusal of this one command (out of memory, say)
                log.warning("cache %s failed: %s: %s", method, type(exc).__name__, exc)
        if _is_counter(key):
            return getattr(self.fallback, method)(key, *args, **kwargs)
        if isinstance(degraded, BaseException):
            raise degraded
        return degraded

    def ping(self) -> None:
        """Raises unless Redis answers now (for /readyz: the breaker is not consulted)."""
        self._cache.get_client(None, write=False).ping()

    # The cache API ---------------------------------------------------------------------------

    def add(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        return self._call(key, "add", value, timeout=timeout, version=version, degraded=False)

    def get(self, key, default=None, version=None):
        value = self._call(key, "get", _MISSING, version=version, degraded=_MISSING)
        return default if value is _MISSING else value

    def set(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        self._call(key, "set", value, timeout=timeout, version=version)

    def touch(self, key, timeout=DEFAULT_TIMEOUT, version=None):
        return self._call(key, "touch", timeout=timeout, version=version, degraded=False)

    def delete(self, key, version=None):
        return self._call(key, "delete", version=version, degraded=False)

    def has_key(self, key, version=None):
        return self._call(key, "has_key", version=version, degraded=False)

    def incr(self, key, delta=1, version=None):
        # Not there, as far as anyone can tell: callers already handle a key that vanished.
        missing = ValueError(f"Key '{key}' not found (the cache is unreachable)")
        return self._call(key, "incr", delta=delta, version=version, degraded=missing)

    def get_many(self, keys, version=None):
        keys = list(keys)
        if not self.is_down():
            try:
                return super().get_many(keys, version=version)
            except (RedisConnectionError, RedisTimeoutError) as exc:
                self._failed(exc)
            except RedisError as exc:
                log.warning("cache get_many failed: %s: %s", type(exc).__name__, exc)
        return self.fallback.get_many([k for k in keys if _is_counter(k)], version=version)

    def set_many(self, data, timeout=DEFAULT_TIMEOUT, version=None):
        failed = []
        for key, value in data.items():
            self.set(key, value, timeout=timeout, version=version)
        return failed

    def delete_many(self, keys, version=None):
        for key in keys:
            self.delete(key, version=version)

    def clear(self):
        self.fallback.clear()
        if self.is_down():
            return False
        try:
            return super().clear()
        except (RedisConnectionError, RedisTimeoutError) as exc:
            self._failed(exc)
            return False


def shared_cache_up() -> bool:
    """Whether the default cache is one every process shares (Redis) and it answers now."""
    backend = caches["default"]  # the backend itself; django.core.cache.cache is a proxy
    return isinstance(backend, FailSoftRedisCache) and not backend.is_down()
