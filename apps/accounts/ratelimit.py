"""Write limits per token, per organization and per anonymous client, counted in the cache.

Every write operation of the API (each POST, PUT, PATCH and DELETE in the OpenAPI document)
passes `WriteThrottle`, which the NinjaAPI applies to all of them; pages that write (Run now)
call `org_write_limit`. Limits are "count/seconds" settings:

- writes (runs, imports, jobs, endpoints, scenarios, pools, schedules): per token
  RATE_LIMIT_TOKEN_WRITES (120/60) and per organization RATE_LIMIT_ORG_WRITES (600/60), so
  many tokens cannot multiply an organization's quota;
- worker reports (job events, the agent's claims): per token RATE_LIMIT_TOKEN_REPORTS
  (600/60) and per organization RATE_LIMIT_ORG_REPORTS (3000/60), apart from writes so a busy
  pool's heartbeats never use up its organization's submissions;
- anonymous writes (the cost calculators' POSTs): per client address RATE_LIMIT_ANON_WRITES
  (60/60), the address as allauth reads it (ALLAUTH_TRUSTED_PROXY_COUNT behind a proxy);
- run bundles (`/runs/<id>/bundle.zip`, a read, but the heaviest): per client address
  RATE_LIMIT_BUNDLES (10/60), answered 429 with Retry-After by the page itself.

Each limit is a sliding window: the writes of the current window plus the previous window's,
weighted by how much of it still overlaps the last `seconds`. So "120/60" admits about 120 in
any 60 seconds, never 2x across a window's edge as a fixed window would. A refused write is
not counted. Past a limit the API answers 429 with Retry-After (apps.api.api).

While the cache (Redis) is unreachable the counters live in each process's memory
(apps.cache): limits hold per web process until Redis answers again.
"""

from __future__ import annotations

import contextlib
import math
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest
from ninja.throttling import BaseThrottle

from apps.accounts.models import ApiToken, Organization

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class RateLimited(Exception):
    def __init__(self, scope: str, retry_after: int, what: str = "writes") -> None:
        super().__init__(f"too many {what} for this {scope}; retry in {retry_after} s")
        self.scope = scope
        self.retry_after = retry_after


def parse_rate(value: str) -> tuple[int, int]:
    """'120/60' -> (120 writes, 60 seconds)."""
    count, _, seconds = value.partition("/")
    return int(count), int(seconds or 1)


@dataclass(frozen=True)
class _Counted:
    bucket: str
    seconds: int


def _count(bucket: str, seconds: int) -> int:
    # Two windows' lifetime: the next window reads this one as its previous.
    cache.add(bucket, 0, timeout=2 * seconds + 1)
    try:
        return cache.incr(bucket)
    except ValueError:  # evicted between add and incr: this write opens the window again
        cache.set(bucket, 1, timeout=2 * seconds + 1)
        return 1


def _hit(key: str, rate: str, now: float) -> tuple[_Counted | None, int | None]:
    """Counts one write against `rate`: (what was counted, None) when allowed, or (None, the
    seconds to wait) when over the limit (and then nothing stays counted)."""
    limit, seconds = parse_rate(rate)
    window = int(now // seconds)
    into = (now - window * seconds) / seconds  # 0 at the window's start, 1 at its end
    bucket = f"ratelimit:{key}:{window}"
    current = _count(bucket, seconds)
    previous = int(cache.get(f"ratelimit:{key}:{window - 1}") or 0)
    if previous * (1 - into) + current <= limit:
        return _Counted(bucket, seconds), None
    _uncount(_Counted(bucket, seconds))
    return None, _retry_after(limit, seconds, into, previous, current - 1)


def _retry_after(limit: int, seconds: int, into: float, previous: int, current: int) -> int:
    """Seconds until one more write fits: previous*(1 - t) + current + 1 <= limit."""
    if current + 1 <= limit and previous > 0:
        # Within this window, as the previous window's weight shrinks.
        wait = seconds * (1 - (limit - current - 1) / previous - into)
    else:
        # This window is full by itself: into the next one, where it is the previous.
        wait = seconds * (1 - into) + seconds * (1 - (limit - 1) / max(current, 1))
    return max(1, min(2 * seconds, math.ceil(wait)))


def _uncount(counted: _Counted | None) -> None:
    if counted is not None:
        with contextlib.suppress(ValueError):  # already gone: nothing to take back
            cache.decr(counted.bucket)


def _limit(pairs: list[tuple[str, str, str]], now: float | None, what: str = "writes") -> None:
    """Count a write under every (scope, key, rate); when one refuses, none stays counted."""
    now = time.time() if now is None else now
    counted: list[_Counted] = []
    for scope, key, rate in pairs:
        hit, retry_after = _hit(key, rate, now)
        if retry_after is not None:
            for done in counted:
                _uncount(done)
            raise RateLimited(scope, retry_after, what)
        assert hit is not None  # _hit counts whatever it does not refuse
        counted.append(hit)


def write_limit(token: ApiToken, now: float | None = None, *, kind: str = "writes") -> None:
    """Raises RateLimited when this token or its organization is over its limit of `kind`
    ("writes" or "reports")."""
    if kind == "reports":
        token_rate, org_rate = settings.RATE_LIMIT_TOKEN_REPORTS, settings.RATE_LIMIT_ORG_REPORTS
    else:
        token_rate, org_rate = settings.RATE_LIMIT_TOKEN_WRITES, settings.RATE_LIMIT_ORG_WRITES
    _limit(
        [
            ("token", f"{kind}:token:{token.pk}", token_rate),
            ("organization", f"{kind}:org:{token.org_id}", org_rate),
        ],
        now,
    )


def org_write_limit(org: Organization, now: float | None = None) -> None:
    """The organization's share alone: for writes made from pages (a person, not a token)."""
    _limit([("organization", f"writes:org:{org.pk}", settings.RATE_LIMIT_ORG_WRITES)], now)


def client_address(request: HttpRequest) -> str:
    """The client's address as allauth's sign-in limits read it (trusted proxies included)."""
    from allauth.core.internal.httpkit import get_client_ip

    return get_client_ip(request) or "unknown"


def anonymous_write_limit(request: HttpRequest, now: float | None = None) -> None:
    address = client_address(request)
    _limit([("client address", f"writes:anon:{address}", settings.RATE_LIMIT_ANON_WRITES)], now)


def download_limit(request: HttpRequest, now: float | None = None) -> None:
    """Run bundles per client address (RATE_LIMIT_BUNDLES), signed in or not: each one zips a
    run's every record, the heaviest read anyone may ask for, so a few clients repeating it
    cannot hold every web worker."""
    address = client_address(request)
    _limit(
        [("client address", f"bundles:{address}", settings.RATE_LIMIT_BUNDLES)],
        now,
        what="bundle downloads",
    )


class WriteThrottle(BaseThrottle):
    """Limits every write operation of the API: set on the NinjaAPI, so each POST, PUT, PATCH
    and DELETE route has it unless a route names its own (worker reports: kind="reports").

    Runs after authentication and before the body is read, so invalid bodies count too. The
    refusal is kept on the request for apps.api.api's 429 (a throttle object is shared by
    concurrent requests, so it holds no state of its own)."""

    def __init__(self, kind: str = "writes") -> None:
        self.kind = kind

    def allow_request(self, request: HttpRequest) -> bool:
        if request.method in SAFE_METHODS:
            return True
        token = getattr(request, "auth", None)
        try:
            if isinstance(token, ApiToken):
                write_limit(token, kind=self.kind)
            else:
                anonymous_write_limit(request)
        except RateLimited as exc:
            request.rate_limited = exc
            return False
        return True
