"""Finding 8 (limits): every write operation in the OpenAPI document is rate-limited, and the
limit is a sliding window that a burst across a window's edge cannot double."""

from __future__ import annotations

import re

import pytest
from django.core.cache import cache

from apps.accounts.ratelimit import RateLimited, write_limit

pytestmark = pytest.mark.django_db

WRITE_METHODS = ("post", "put", "patch", "delete")


def write_operations(client) -> list[tuple[str, str, bool]]:
    schema = client.get("/api/v1/openapi.json").json()
    operations = []
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            if method in WRITE_METHODS:
                operations.append((method, path, bool(operation.get("security"))))
    return operations


def test_the_api_has_the_write_operations_this_test_expects(client):
    operations = {(m, p) for m, p, _ in write_operations(client)}
    # Not the whole list (it grows): enough to know the enumeration reads the document.
    expected = {("post", "/api/v1/runs"), ("post", "/api/v1/scenarios"), ("post", "/api/v1/pools")}
    assert expected | {("post", "/api/v1/endpoints")} <= operations
    assert ("delete", "/api/v1/schedules/{schedule_id}") in operations
    assert len(operations) >= 15


def test_every_write_operation_is_rate_limited(client, settings):
    from apps.accounts.services import organization_get_or_create, token_create

    for name in ("TOKEN_WRITES", "ORG_WRITES", "TOKEN_REPORTS", "ORG_REPORTS", "ANON_WRITES"):
        setattr(settings, f"RATE_LIMIT_{name}", "1/3600")
    unlimited = []
    for number, (method, path, secured) in enumerate(write_operations(client)):
        cache.clear()
        headers = {}
        if secured:
            # A fresh organization each time: its limit is not used up by another operation.
            org = organization_get_or_create(slug=f"limits-{number}")
            headers["HTTP_AUTHORIZATION"] = f"Bearer {token_create(org=org).plaintext}"
        url = re.sub(r"\{[^}]+\}", "1", path)
        if path.endswith("/agent/claim"):
            url += "?pool=pool.none&wait=0"
        send = getattr(client, method)
        first = send(url, "{}", content_type="application/json", **headers)
        second = send(url, "{}", content_type="application/json", **headers)
        if second.status_code != 429 or not second.has_header("Retry-After"):
            unlimited.append(f"{method.upper()} {path}: {first.status_code}, {second.status_code}")
    assert not unlimited, unlimited


def test_scenarios_endpoints_and_pools_stop_at_the_token_limit(client, auth, settings):
    settings.RATE_LIMIT_TOKEN_WRITES = "3/60"
    answers = [
        client.post("/api/v1/pools", {"name": f"p{i}"}, content_type="application/json", **auth)
        for i in range(5)
    ]
    assert [a.status_code for a in answers] == [201, 201, 201, 429, 429]


def test_a_burst_across_a_window_edge_cannot_pass_twice_the_rate(issued, settings):
    settings.RATE_LIMIT_TOKEN_WRITES = "10/60"
    token = issued.token
    for _ in range(10):  # the end of one window
        write_limit(token, now=6000 * 60 + 59.9)
    admitted = 0
    for _ in range(10):  # the start of the next
        try:
            write_limit(token, now=6000 * 60 + 60.1)
            admitted += 1
        except RateLimited as exc:
            assert 1 <= exc.retry_after <= 60
    assert admitted == 0
    # Half a window on, half of the earlier burst has slid out of it.
    later = 0
    for _ in range(10):
        try:
            write_limit(token, now=6000 * 60 + 90.1)
            later += 1
        except RateLimited:
            pass
    assert 4 <= later <= 5


def test_a_refused_write_is_not_counted_and_retry_after_is_when_one_fits(issued, settings):
    settings.RATE_LIMIT_TOKEN_WRITES = "2/60"
    token, start = issued.token, 7000 * 60
    write_limit(token, now=start)
    write_limit(token, now=start)
    with pytest.raises(RateLimited) as refused:
        write_limit(token, now=start + 1)
    wait = refused.value.retry_after
    for _ in range(5):  # refusals do not push the wait further out
        with pytest.raises(RateLimited):
            write_limit(token, now=start + 1)
    write_limit(token, now=start + 1 + wait)  # fits by then
