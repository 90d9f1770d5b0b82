"""What a member made stops with the power that made it: a removed or demoted admin's open
invitations are revoked, and a member demoted to viewer holds tokens that only read."""

from __future__ import annotations

import pytest

from apps.accounts.members import member_remove, member_set_role
from apps.accounts.models import ApiToken, Membership, Role
from apps.accounts.services import (
    invitation_create,
    invitation_get,
    organization_create,
    token_authenticate,
    token_create,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def org(person):
    return organization_create(name="Acme", owner=person(email="owner@example.com"))


def test_a_removed_admins_any_address_invitation_no_longer_admits_them(org, person):
    admin = person(org, role="admin")
    link = invitation_create(org=org, created_by=admin, role=Role.ADMIN, any_address=True)
    member_remove(membership=Membership.objects.get(org=org, user=admin), actor="owner")
    assert invitation_get(link.plaintext) is None
    assert not Membership.objects.filter(org=org, user=admin).exists()


def test_a_demoted_admins_invitations_are_revoked(org, person):
    admin = person(org, role="admin")
    link = invitation_create(org=org, created_by=admin, role=Role.ADMIN, any_address=True)
    member_set_role(
        membership=Membership.objects.get(org=org, user=admin), role=Role.VIEWER, actor="owner"
    )
    assert invitation_get(link.plaintext) is None


def test_a_member_demoted_to_viewer_holds_a_token_that_cannot_write(org, person, client):
    member = person(org, role="admin")
    issued = token_create(org=org, name="mine", created_by=member)
    assert token_authenticate(issued.plaintext).scope == ApiToken.Scope.WRITE
    member_set_role(
        membership=Membership.objects.get(org=org, user=member), role=Role.VIEWER, actor="owner"
    )
    assert token_authenticate(issued.plaintext).scope == ApiToken.Scope.READ
    refused = client.post(
        "/api/v1/pools",
        data='{"name": "lab"}',
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {issued.plaintext}",
    )
    assert refused.status_code == 403


def test_a_promotion_keeps_invitations_and_tokens(org, person):
    member = person(org, role="member")
    issued = token_create(org=org, name="mine", created_by=member)
    member_set_role(
        membership=Membership.objects.get(org=org, user=member), role=Role.ADMIN, actor="owner"
    )
    assert token_authenticate(issued.plaintext).scope == ApiToken.Scope.WRITE
