"""`/readyz`: whether this process can serve, part by part (`/healthz` is liveness only).

Checks the database, the cache and the broker, each bounded by a few seconds, and answers
200 with every part "ok", or 503 (Retry-After) naming each part that is not. A load balancer
takes a process out of rotation on /readyz; an orchestrator restarts it only on /healthz,
since restarting a web process does not bring back its database.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.http import HttpRequest, JsonResponse

BROKER_TIMEOUT_S = 2.0


def _database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


def _cache() -> None:
    ping = getattr(cache, "ping", None)
    if ping is not None:  # Redis (apps.cache); the in-process cache is always there
        ping()


def _broker() -> None:
    url = settings.CELERY_BROKER_URL
    if url.startswith(("redis://", "rediss://")):
        import redis

        client = redis.Redis.from_url(
            url, socket_connect_timeout=BROKER_TIMEOUT_S, socket_timeout=BROKER_TIMEOUT_S
        )
        try:
            client.ping()
        finally:
            client.close()
        return
    from apps.jobs.broker import celery_app

    with celery_app().connection_for_write(url) as conn:
        conn.ensure_connection(max_retries=1, interval_start=0, timeout=BROKER_TIMEOUT_S)


CHECKS: dict[str, Callable[[], None]] = {
    "database": _database,
    "cache": _cache,
    "broker": _broker,
}


def readyz(request: HttpRequest) -> JsonResponse:
    checks: dict[str, str] = {}
    for name, check in CHECKS.items():
        try:
            check()
        except Exception as exc:  # noqa: BLE001 - any failure means: not ready
            checks[name] = f"unavailable ({type(exc).__name__})"
        else:
            checks[name] = "ok"
    down = [name for name, state in checks.items() if state != "ok"]
    body = {"status": "unavailable" if down else "ok", "unavailable": down, "checks": checks}
    response = JsonResponse(body, status=503 if down else 200)
    if down:
        response["Retry-After"] = str(settings.UNAVAILABLE_RETRY_AFTER_S)
    response["Cache-Control"] = "no-store"
    return response
