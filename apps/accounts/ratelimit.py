"""Write limits per token and per organization, counted in the cache (Redis in production).

A fixed window per limit: "120/60" allows 120 writes in each 60-second window. Both the
token's and its organization's limits apply, so many tokens cannot multiply an
organization's quota. Past either, the API answers 429 with Retry-After (apps.api.api).
"""

import math
import time

from django.conf import settings
from django.core.cache import cache

from apps.accounts.models import ApiToken, Organization


class RateLimited(Exception):
    def __init__(self, scope: str, retry_after: int) -> None:
        super().__init__(f"too many writes for this {scope}; retry in {retry_after} s")
        self.scope = scope
        self.retry_after = retry_after


def parse_rate(value: str) -> tuple[int, int]:
    """'120/60' -> (120 writes, 60 seconds)."""
    count, _, seconds = value.partition("/")
    return int(count), int(seconds or 1)


def _hit(key: str, rate: str, now: float) -> int | None:
    """Counts one write; the seconds until the window ends when it is over the limit."""
    limit, seconds = parse_rate(rate)
    window = int(now // seconds)
    bucket = f"ratelimit:{key}:{window}"
    cache.add(bucket, 0, timeout=seconds + 1)
    try:
        count = cache.incr(bucket)
    except ValueError:  # evicted between add and incr: this write opens the window again
        cache.set(bucket, 1, timeout=seconds + 1)
        count = 1
    if count <= limit:
        return None
    return max(1, math.ceil((window + 1) * seconds - now))


def write_limit(token: ApiToken, now: float | None = None) -> None:
    """Raises RateLimited when this token or its organization is over its write limit."""
    now = time.time() if now is None else now
    retry_after = _hit(f"token:{token.pk}", settings.RATE_LIMIT_TOKEN_WRITES, now)
    if retry_after is not None:
        raise RateLimited("token", retry_after)
    org_write_limit(token.org, now)


def org_write_limit(org: Organization, now: float | None = None) -> None:
    """The organization's share alone: for writes made from pages (a person, not a token)."""
    now = time.time() if now is None else now
    retry_after = _hit(f"org:{org.pk}", settings.RATE_LIMIT_ORG_WRITES, now)
    if retry_after is not None:
        raise RateLimited("organization", retry_after)
