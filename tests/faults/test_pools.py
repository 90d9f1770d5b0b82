"""Finding 8 (pools): pool names are scoped to their organization, so nobody can squat
another's planned name; an endpoint names only its organization's pools or first-party ones,
so no tenant can make the broker grow a queue nobody serves."""

from __future__ import annotations

import json

import pytest
import redis

from apps.accounts.services import organization_get_or_create, token_create
from apps.jobs.models import Endpoint, Pool
from tests.apps.jobs.conftest import DEPLOYMENT_FACTS

# Committed rows, as the agent's tests have: its long poll gives its connection back between
# checks (close_old_connections), which inside a test's wrapping transaction closes the very
# connection the next request of the test needs ("the connection is closed": a 503).
pytestmark = pytest.mark.django_db(transaction=True)


def post(client, path: str, body: dict, token: str):
    return client.post(
        path,
        json.dumps(body),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )


def test_two_organizations_each_claim_the_same_pool_name(client, issued):
    rival = token_create(org=organization_get_or_create(slug="squatter")).plaintext
    assert post(client, "/api/v1/pools", {"name": "h100-lab"}, rival).status_code == 201
    mine = post(client, "/api/v1/pools", {"name": "h100-lab"}, issued.plaintext)
    assert mine.status_code == 201 and mine.json()["name"] == "pool.h100-lab"
    # Each sees its own pool, empty; neither is told about the other.
    for token in (rival, issued.plaintext):
        claim = client.post(
            "/api/v1/agent/claim?pool=pool.h100-lab&wait=0", HTTP_AUTHORIZATION=f"Bearer {token}"
        )
        assert claim.status_code == 204


def test_a_first_party_pool_name_cannot_be_claimed(client, issued, broker):
    name = broker.pool()
    refused = post(client, "/api/v1/pools", {"name": name}, issued.plaintext)
    assert refused.status_code == 409


def test_a_name_in_the_operators_registry_cannot_be_claimed_before_addpool(
    client, issued, settings
):
    settings.FIRST_PARTY_POOLS = ["b200-fleet"]
    for name in ("b200-fleet", "pool.b200-fleet"):
        refused = post(client, "/api/v1/pools", {"name": name}, issued.plaintext)
        assert refused.status_code == 409
    assert not Pool.objects.filter(name="pool.b200-fleet").exists()


def test_an_endpoint_on_a_made_up_pool_is_refused_and_no_queue_appears(client, issued, broker):
    body = {
        "name": "e",
        "url": "http://127.0.0.1:30000/v1",
        "pool": "pool.anything-i-like",
        **DEPLOYMENT_FACTS,
    }
    response = post(client, "/api/v1/endpoints", body, issued.plaintext)
    assert response.status_code == 422
    assert response.json()["detail"][0]["path"] == "pool"
    assert not Endpoint.objects.exists()
    assert not redis.Redis.from_url(broker.url).exists("pool.anything-i-like")
    # A first-party pool, or the organization's own, is accepted.
    body["pool"] = broker.pool()
    assert post(client, "/api/v1/endpoints", body, issued.plaintext).status_code == 201
