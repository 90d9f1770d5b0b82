"""Finding 4: invitation links expire (INVITATION_MAX_AGE_DAYS), are bound to the invited
address (unless the admin allows any), and are listed and revocable on /org/."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.accounts.models import AuditEvent, Invitation, Membership, Role
from apps.accounts.services import organization_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def owned(client, person):
    owner = person(email="owner@example.com")
    org = organization_create(name="Acme", owner=owner)
    client.force_login(owner)
    return org


def invite(client, **form) -> str:
    client.post("/org/invite/", {"role": "viewer", **form})
    page = client.get("/org/").content.decode()
    return page.split('id="invite-link">')[1].split("<")[0].removeprefix("http://testserver")


def test_a_400_day_old_link_is_refused(client, owned, person):
    path = invite(client, email="late@example.com")
    Invitation.objects.update(created_at=timezone.now() - timedelta(days=400))
    client.force_login(person(email="late@example.com"))
    assert client.get(path).status_code == 404
    assert client.post(path).status_code == 404
    assert not Membership.objects.filter(user__email="late@example.com").exists()


def test_the_expiry_is_a_setting(client, owned, person, settings):
    path = invite(client, email="soon@example.com")
    Invitation.objects.update(created_at=timezone.now() - timedelta(days=2))
    client.force_login(person(email="soon@example.com"))
    settings.INVITATION_MAX_AGE_DAYS = 1
    assert client.get(path).status_code == 404
    settings.INVITATION_MAX_AGE_DAYS = 7
    client.post(path)
    assert Membership.objects.get(user__email="soon@example.com").role == Role.VIEWER


def test_a_link_sent_to_one_address_cannot_make_another_account_a_member(client, owned, person):
    path = invite(client, email="invited@example.com")
    client.force_login(person(email="someone-else@example.com"))
    assert client.get(path).status_code == 403
    assert client.post(path).status_code == 403
    assert not Membership.objects.filter(user__email="someone-else@example.com").exists()
    # Still open for the person it was sent to.
    invited = person(email="Invited@Example.com")
    client.force_login(invited)
    client.post(path)
    assert Membership.objects.filter(user=invited).exists()


def test_any_address_only_when_the_admin_says_so(client, owned, person):
    client.post("/org/invite/", {"role": "viewer"})  # no address, not allowed explicitly
    assert not Invitation.objects.exists()
    assert "give the invited address" in client.get("/org/").content.decode()
    path = invite(client, any_address="on")
    client.force_login(person(email="whoever@example.com"))
    client.post(path)
    assert Membership.objects.filter(user__email="whoever@example.com").exists()


def test_open_invitations_are_listed_and_an_admin_revokes_one(client, owned, person):
    path = invite(client, email="listed@example.com")
    page = client.get("/org/").content.decode()
    table = page.split('id="invitations"')[1].split("</table>")[0]
    assert "listed@example.com" in table and "viewer" in table
    invitation = Invitation.objects.get()
    # A member may not revoke; an admin may.
    member = person(owned, Role.MEMBER)
    client.force_login(member)
    assert client.post(f"/org/invitations/{invitation.pk}/revoke/").status_code == 403
    client.force_login(owned.memberships.get(role=Role.OWNER).user)
    assert client.post(f"/org/invitations/{invitation.pk}/revoke/").status_code == 302
    after = client.get("/org/").content.decode().split('id="invitations"')[1].split("</table>")[0]
    assert "listed@example.com" not in after and "no open invitations" in after
    assert AuditEvent.objects.filter(action="invitation.revoked").exists()
    client.force_login(person(email="listed@example.com"))
    assert client.get(path).status_code == 404
