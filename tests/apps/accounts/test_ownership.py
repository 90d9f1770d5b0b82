"""Ownership moves only by an offer its recipient accepts: no role setting makes an owner, an
offer changes nothing until accepted, and it lapses when its giver stops being an owner."""

from __future__ import annotations

import pytest

from apps.accounts.members import member_set_role, ownership_accept, ownership_offer
from apps.accounts.models import AuditEvent, Membership, OwnershipTransfer, Role
from apps.accounts.services import MembershipError, invitation_create, organization_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def acme(person):
    owner = person(email="owner@example.com")
    org = organization_create(name="Acme", owner=owner)
    heir = person(org, Role.ADMIN, email="heir@example.com")
    return org, owner, heir


def role(org, user) -> str:
    return Membership.objects.get(org=org, user=user).role


def test_setting_the_owner_role_is_refused_ownership_moves_by_transfer(client, acme):
    org, owner, heir = acme
    client.force_login(owner)
    heirs = Membership.objects.get(org=org, user=heir)
    client.post(f"/org/members/{heirs.pk}/role/", {"role": "owner"})
    assert role(org, heir) == Role.ADMIN
    assert "accepted transfer" in client.get("/org/").content.decode()
    with pytest.raises(MembershipError, match="transfer"):
        member_set_role(membership=heirs, role=Role.OWNER, actor="system")


def test_an_accepted_hand_over_makes_them_owner_and_the_giver_an_admin(client, acme):
    org, owner, heir = acme
    client.force_login(owner)
    heirs = Membership.objects.get(org=org, user=heir)
    client.post(f"/org/members/{heirs.pk}/offer-ownership/", {"steps_down": "on"})
    transfer = OwnershipTransfer.objects.get()
    assert (role(org, owner), role(org, heir)) == (Role.OWNER, Role.ADMIN)  # nothing yet
    # Only the member it is offered to may accept it.
    assert client.post(f"/org/ownership/{transfer.pk}/accept/").status_code == 403
    assert role(org, heir) == Role.ADMIN
    client.force_login(heir)
    assert "Accept ownership" in client.get("/org/").content.decode()
    client.post(f"/org/ownership/{transfer.pk}/accept/")
    assert (role(org, owner), role(org, heir)) == (Role.ADMIN, Role.OWNER)
    transfer.refresh_from_db()
    assert transfer.outcome == OwnershipTransfer.Outcome.ACCEPTED
    assert AuditEvent.objects.filter(org=org, action="ownership.accepted").exists()
    # Spent: a second accept changes nothing.
    client.post(f"/org/ownership/{transfer.pk}/accept/")
    assert role(org, owner) == Role.ADMIN


def test_an_offer_that_is_not_a_hand_over_leaves_two_owners(acme):
    org, owner, heir = acme
    transfer = ownership_offer(
        membership=Membership.objects.get(org=org, user=heir), by=owner, actor="o", steps_down=False
    )
    ownership_accept(transfer=transfer, user=heir, actor="h")
    assert (role(org, owner), role(org, heir)) == (Role.OWNER, Role.OWNER)


def test_only_an_owner_offers_ownership(client, acme, person):
    org, _, heir = acme
    client.force_login(heir)  # an admin
    viewer = Membership.objects.get(user=person(org, Role.VIEWER))
    assert client.post(f"/org/members/{viewer.pk}/offer-ownership/").status_code == 403
    assert not OwnershipTransfer.objects.exists()


def test_an_offer_lapses_when_its_giver_is_no_longer_an_owner(acme, person):
    org, owner, heir = acme
    second = person(org, Role.MEMBER)
    transfer = ownership_offer(
        membership=Membership.objects.get(org=org, user=second), by=owner, actor="o"
    )
    # The owner hands over to the heir (not a hand-over: both owners), then steps down.
    both = ownership_offer(
        membership=Membership.objects.get(org=org, user=heir), by=owner, actor="o", steps_down=False
    )
    ownership_accept(transfer=both, user=heir, actor="h")
    member_set_role(
        membership=Membership.objects.get(org=org, user=owner), role=Role.ADMIN, actor="o", by=owner
    )
    with pytest.raises(MembershipError):
        ownership_accept(transfer=transfer, user=second, actor="s")
    assert role(org, second) == Role.MEMBER


def test_an_invitation_cannot_make_an_owner(acme):
    org, owner, _ = acme
    with pytest.raises(MembershipError, match="role"):
        invitation_create(org=org, created_by=owner, role=Role.OWNER, any_address=True)
