"""Finding 8 (pools) and issue 45: a pool name has one owner (one organization, or the
service), so two tenants' agents never share a name that a later `addpool`, an operator or a
log could confuse; an endpoint names only its organization's pools or first-party ones, so no
tenant can make the broker grow a queue nobody serves."""

from __future__ import annotations

import io
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


def test_a_pool_name_has_one_owner(client, issued):
    rival = token_create(org=organization_get_or_create(slug="squatter")).plaintext
    assert post(client, "/api/v1/pools", {"name": "h100-lab"}, rival).status_code == 201
    mine = post(client, "/api/v1/pools", {"name": "h100-lab"}, issued.plaintext)
    assert mine.status_code == 409
    assert mine.json()["detail"][0]["path"] == "name"
    assert "another organization's" in mine.json()["detail"][0]["message"]
    assert Pool.objects.filter(name="pool.h100-lab").count() == 1
    # The owner claiming its own name again is no conflict (idempotent).
    assert post(client, "/api/v1/pools", {"name": "h100-lab"}, rival).status_code == 201
    # The loser's agent reaches no pool of that name: nothing to claim, nothing revealed.
    claim = client.post(
        "/api/v1/agent/claim?pool=pool.h100-lab&wait=0",
        HTTP_AUTHORIZATION=f"Bearer {issued.plaintext}",
    )
    assert claim.status_code == 404


def test_the_database_holds_one_owner_even_past_the_service(org):
    from django.db import IntegrityError, transaction

    Pool.objects.create(name="pool.raced", org=organization_get_or_create(slug="first"))
    with pytest.raises(IntegrityError), transaction.atomic():
        Pool.objects.create(name="pool.raced", org=org)


def test_names_under_the_operators_prefix_cannot_be_claimed(client, issued, settings):
    settings.FIRST_PARTY_POOL_PREFIX = "fleet-"
    for name in ("fleet-b300", "pool.fleet-anything"):
        refused = post(client, "/api/v1/pools", {"name": name}, issued.plaintext)
        assert refused.status_code == 409
        assert refused.json()["detail"][0]["path"] == "name"
    assert not Pool.objects.filter(name__startswith="pool.fleet-").exists()
    assert post(client, "/api/v1/pools", {"name": "lab-b300"}, issued.plaintext).status_code == 201


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


def test_addpool_refuses_a_name_an_organization_holds_and_adds_none(client, org, issued):
    from django.core.management import CommandError, call_command

    assert post(client, "/api/v1/pools", {"name": "lab-h100"}, issued.plaintext).status_code == 201
    with pytest.raises(CommandError) as refused:
        call_command("addpool", "fresh-b200", "lab-h100", stdout=io.StringIO())
    message = str(refused.value)
    assert "pool.lab-h100" in message and repr(org.slug) in message
    # All or none: the free name in the same call was not registered either.
    assert list(Pool.objects.filter(org__isnull=True).values_list("name", flat=True)) == []
    assert Pool.objects.get(name="pool.lab-h100").org == org
    # A free name alone is registered as before.
    out = io.StringIO()
    call_command("addpool", "fresh-b200", stdout=out)
    assert "first-party pool pool.fresh-b200" in out.getvalue()
