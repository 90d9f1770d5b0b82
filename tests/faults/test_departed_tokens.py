"""Finding 10: a member's removal revokes the tokens they made (or reassigns them, when the
admin chooses so), audit-logged; no token keeps reading private runs for someone gone."""

from __future__ import annotations

import pytest

from apps.accounts.models import ApiToken, AuditEvent, Membership, Role
from apps.accounts.services import organization_create
from tests.reviews import ingest_reviewed

pytestmark = pytest.mark.django_db


@pytest.fixture
def org_with_admin_token(client, person, document):

    owner = person(email="owner@example.com")
    org = organization_create(name="Acme", owner=owner)
    admin = person(org, Role.ADMIN, email="admin@example.com")
    client.force_login(admin)
    client.post("/org/tokens/", {"name": "admins-ci", "scope": "read"})
    token = client.get("/org/").content.decode().split('id="new-token">')[1].split("<")[0]
    run = ingest_reviewed(document=document, org=org, is_public=False).run
    return org, owner, admin, token, run


def reads_private_run(client, token: str, run) -> bool:
    response = client.get(f"/api/v1/runs/{run.pk}", HTTP_AUTHORIZATION=f"Bearer {token}")
    return response.status_code == 200


def test_removing_a_member_revokes_the_tokens_they_made(client, org_with_admin_token):
    org, owner, admin, token, run = org_with_admin_token
    assert reads_private_run(client, token, run)
    client.force_login(owner)
    membership = Membership.objects.get(org=org, user=admin)
    client.post(f"/org/members/{membership.pk}/remove/", {"tokens": "revoke"})
    assert not Membership.objects.filter(pk=membership.pk).exists()
    assert not reads_private_run(client, token, run)
    revoked = AuditEvent.objects.get(action="token.revoked")
    assert "admin@example.com" in revoked.detail["reason"]


def test_an_admin_may_keep_the_tokens_as_their_own_instead(client, org_with_admin_token):
    org, owner, admin, token, run = org_with_admin_token
    client.force_login(owner)
    membership = Membership.objects.get(org=org, user=admin)
    client.post(f"/org/members/{membership.pk}/remove/", {"tokens": "reassign"})
    assert reads_private_run(client, token, run)
    assert ApiToken.objects.get(name="admins-ci").created_by == owner
    reassigned = AuditEvent.objects.get(action="token.reassigned")
    assert reassigned.detail == {"made_by": "admin@example.com", "now_of": "owner@example.com"}


def test_leaving_or_losing_the_account_revokes_them_too(client, org_with_admin_token):
    org, owner, admin, token, run = org_with_admin_token
    admin.delete()  # the membership goes with the account
    assert not reads_private_run(client, token, run)
