"""Finding 2: with Redis (cache and broker) unreachable the pages render uncached, the API
answers, limits still hold (counted in process memory), Run now answers 503 with
Retry-After, and /readyz names the cache."""

from __future__ import annotations

import copy

import httpx
import pytest

from apps import cache as cache_module
from apps.cache import FailSoftRedisCache
from apps.jobs.models import Job
from tests.faults.conftest import dead_url


@pytest.fixture
def cache_down(settings):
    """The cache and the broker on a port where nothing listens."""
    down = dead_url("redis", "/0")
    settings.CACHES = {
        "default": {
            "BACKEND": "apps.cache.FailSoftRedisCache",
            "LOCATION": down,
            "OPTIONS": {"TIMEOUT_S": 1, "RETRY_S": 5},
        }
    }
    settings.CELERY_BROKER_URL = down
    return down


def submit(client, document, auth, key: str):
    body = copy.deepcopy(document)
    body["idempotency_key"] = f"cache-down-{key}-0000"
    return client.post("/api/v1/runs", body, content_type="application/json", **auth)


@pytest.mark.django_db
def test_pages_and_the_api_answer_without_the_cache(
    cache_down, client, auth, document, settings, monkeypatch
):
    # A breaker that stays open for the whole test, and a count of the calls that went to
    # Redis and failed: the breaker works when only the first one does.
    settings.CACHES = {
        "default": {**settings.CACHES["default"], "OPTIONS": {"TIMEOUT_S": 1, "RETRY_S": 600}}
    }
    # The fixtures already tried Redis (a token's creation tells other processes to forget
    # the tokens they remember): count from a closed breaker.
    monkeypatch.setattr(cache_module, "_down_until", {})
    failures: list[Exception] = []
    real_failed = FailSoftRedisCache._failed
    monkeypatch.setattr(
        FailSoftRedisCache,
        "_failed",
        lambda self, exc: (failures.append(exc), real_failed(self, exc))[1],
    )
    assert submit(client, document, auth, "a").status_code == 201
    assert submit(client, document, auth, "a").status_code == 200  # replay, same run
    board = client.get("/")
    assert board.status_code == 200
    listed = client.get("/api/v1/runs")
    assert listed.status_code == 200 and listed.json()["count"] == 1
    assert client.get("/runs/").status_code == 200
    # Uncached, and without a wait per call: one failed connect, then the breaker skips Redis.
    assert len(failures) == 1, failures


@pytest.mark.django_db
def test_write_limits_still_hold_without_the_cache(cache_down, client, auth, document, settings):
    settings.RATE_LIMIT_TOKEN_WRITES = "2/3600"
    assert submit(client, document, auth, "a").status_code == 201
    assert submit(client, document, auth, "b").status_code == 201
    refused = submit(client, document, auth, "c")
    assert refused.status_code == 429 and int(refused["Retry-After"]) >= 1


@pytest.mark.django_db
def test_sign_in_works_and_is_still_limited_without_the_cache(cache_down, client, person):
    user = person(email="signin@example.com")
    wrong = {"login": user.email, "password": "not-it"}
    for _ in range(5):
        assert client.post("/accounts/login/", wrong).status_code == 200
    # allauth's lockout (5 failures per address) is counted in memory while Redis is down.
    locked = client.post("/accounts/login/", {"login": user.email, "password": "pw"})
    assert locked.status_code in (200, 429) and "_auth_user_id" not in client.session
    other = person(email="other@example.com")
    ok = client.post("/accounts/login/", {"login": other.email, "password": "pw"})
    assert ok.status_code == 302 and "_auth_user_id" in client.session


@pytest.mark.django_db
def test_run_now_answers_503_with_retry_after_and_stores_the_job_failed(
    client, auth, endpoint, scenario, person, cache_down
):
    url = f"/api/v1/endpoints/{endpoint.pk}/runs"
    response = client.post(
        url, {"scenario": scenario.slug}, content_type="application/json", **auth
    )
    assert response.status_code == 503, response.content
    assert int(response["Retry-After"]) > 0
    assert response.json()["detail"][0]["path"] == "broker"
    assert Job.objects.get().status == "failed"
    # The page's Run now too: the failed job (with Retry) in a 503 htmx swaps in.
    client.force_login(person(endpoint.org, "member"))
    page = client.post(f"/endpoints/{endpoint.pk}/run/", {"scenario": scenario.slug})
    assert page.status_code == 503 and int(page["Retry-After"]) > 0
    assert "broker is unreachable" in page.content.decode() and "Retry" in page.content.decode()


@pytest.mark.django_db
def test_readyz_names_the_cache_and_the_broker_while_healthz_stays_ok(cache_down, client):
    ready = client.get("/readyz")
    assert ready.status_code == 503 and ready["Retry-After"]
    body = ready.json()
    assert body["unavailable"] == ["cache", "broker"]
    assert body["checks"]["database"] == "ok"
    assert client.get("/healthz").status_code == 200


@pytest.mark.django_db
def test_readyz_is_ok_when_every_part_answers(client):
    ready = client.get("/readyz")
    assert ready.status_code == 200, ready.content
    assert ready.json()["checks"] == {"database": "ok", "cache": "ok", "broker": "ok"}


@pytest.mark.django_db(transaction=True)
def test_the_production_command_serves_with_redis_down(production_server, org, issued, document):
    down = dead_url("redis", "/0")
    url = production_server(REDIS_URL=down, CELERY_BROKER_URL=down)
    auth = {"Authorization": f"Bearer {issued.plaintext}"}
    document["idempotency_key"] = "cache-down-production-0000"
    with httpx.Client(base_url=url, timeout=30) as http:
        assert http.post("/api/v1/runs", json=document, headers=auth).status_code == 201
        assert http.get("/").status_code == 200
        assert http.get("/api/v1/runs").json()["count"] == 1
        ready = http.get("/readyz")
        assert ready.status_code == 503 and "cache" in ready.json()["unavailable"]
