"""Removal ends everything the person held: their signed-in sessions, the tokens they made,
their open invitations and the organization's email alerts addressed to them; and only an
owner removes or demotes an owner (issue 53)."""

from __future__ import annotations

import pytest
from django.core import mail
from django.test import Client

from apps.accounts.models import ApiToken, Membership, Role, SignedInSession
from apps.accounts.services import (
    invitation_create,
    invitation_get,
    member_add,
    organization_create,
    token_create,
)
from apps.regressions.models import Alert, Delivery, Subscription
from apps.regressions.services import alerts_deliver, regressions_detect
from tests.apps.regressions.series import stored_series

pytestmark = pytest.mark.django_db


def regression() -> None:
    """GLM 5.2 on MI355X drops 25% between two engine versions: a public change point."""
    stored_series([8000] * 6)
    stored_series([6000] * 3, first_day=6, engine_version="0.5.24")


@pytest.fixture
def acme(person):
    owner = person(email="owner@example.com")
    return organization_create(name="Acme", owner=owner), owner


def test_a_removed_member_keeps_no_session_token_invitation_or_alert(client, person, acme):
    org, owner = acme
    leaver = person(org, Role.ADMIN, email="leaver@example.com")
    theirs = Client()
    theirs.force_login(leaver)
    assert "Acme" in theirs.get("/org/").content.decode()
    issued = token_create(org=org, name="theirs", created_by=leaver)
    link = invitation_create(org=org, created_by=leaver, role=Role.ADMIN, any_address=True)
    shared = Subscription.objects.create(
        org=org, channel="email", target="leaver@example.com, owner@example.com"
    )
    only_theirs = Subscription.objects.create(org=org, channel="email", target="Leaver@example.com")

    client.force_login(owner)
    removal = Membership.objects.get(org=org, user=leaver)
    assert client.post(f"/org/members/{removal.pk}/remove/").status_code == 302
    assert not Membership.objects.filter(org=org, user=leaver).exists()

    # The session is over: their browser is asked to sign in again.
    after = theirs.get("/org/")
    assert after.status_code == 302 and after["Location"].startswith("/accounts/login/")
    assert not SignedInSession.objects.filter(user=leaver).exists()
    # The token they made is revoked, their "anyone with the link" invitation withdrawn.
    bearer = {"HTTP_AUTHORIZATION": f"Bearer {issued.plaintext}"}
    assert client.get("/api/v1/endpoints", **bearer).status_code == 401
    assert ApiToken.objects.get(pk=issued.token.pk).revoked_at is not None
    assert invitation_get(link.plaintext) is None
    # Their address left the subscriptions; one left with none is switched off.
    shared.refresh_from_db()
    only_theirs.refresh_from_db()
    assert shared.addresses == ["owner@example.com"] and shared.active
    assert only_theirs.addresses == [] and not only_theirs.active

    # The next alert reaches the organization, not them.
    regression()
    regressions_detect()
    alerts_deliver()
    recipients = {address.lower() for message in mail.outbox for address in message.to}
    assert "owner@example.com" in recipients
    assert "leaver@example.com" not in recipients


def test_an_alert_is_mailed_only_to_addresses_still_a_members(person, acme):
    """Checked again at delivery: a subscription that still names someone gone (written
    before removal took addresses out, or by hand) mails no one outside."""
    org, owner = acme
    Subscription.objects.create(
        org=org, channel="email", target="gone@example.com, owner@example.com"
    )
    outsider = Subscription.objects.create(org=org, channel="email", target="gone@example.com")
    regression()
    regressions_detect()
    alerts_deliver()
    recipients = {address for message in mail.outbox for address in message.to}
    assert recipients == {"owner@example.com"}
    refused = Delivery.objects.filter(alert__subscription=outsider)
    assert refused.exists() and not any(d.ok for d in refused)
    assert "member" in refused.first().error
    assert not Alert.objects.filter(subscription=outsider, status=Alert.Status.SENT).exists()


def test_an_admin_can_neither_remove_nor_demote_an_owner(client, person, acme):
    org, owner = acme
    # A second owner, so the last-owner rule is not what stops the admin.
    member_add(org=org, user=person(email="second@example.com"), role=Role.OWNER)
    admin = person(org, Role.ADMIN, email="admin@example.com")
    issued = token_create(org=org, name="owners-ci", created_by=owner)
    target = Membership.objects.get(org=org, user=owner)
    client.force_login(admin)
    removal = client.post(f"/org/members/{target.pk}/remove/", {"tokens": "reassign"})
    assert removal.status_code == 403
    demotion = client.post(f"/org/members/{target.pk}/role/", {"role": "admin"})
    assert demotion.status_code == 403
    target.refresh_from_db()
    assert target.role == Role.OWNER
    token = ApiToken.objects.get(pk=issued.token.pk)
    assert token.created_by == owner and token.revoked_at is None


def test_the_removal_service_itself_refuses_an_admin_removing_an_owner(person, acme):
    """The rule holds below the page too, under the lock (a page's check could be stale)."""
    from django.core.exceptions import PermissionDenied

    from apps.accounts.members import member_remove

    org, owner = acme
    member_add(org=org, user=person(), role=Role.OWNER)
    admin = person(org, Role.ADMIN)
    with pytest.raises(PermissionDenied):
        member_remove(
            membership=Membership.objects.get(org=org, user=owner), actor="admin", by=admin
        )
    assert Membership.objects.filter(org=org, user=owner, role=Role.OWNER).exists()


def test_the_claims_ledgers_email_alerts_forget_a_removed_member_too(client, person, acme):
    from apps.claims.models import ClaimSubscription

    org, owner = acme
    leaver = person(org, Role.MEMBER, email="leaver@example.com")
    ledger = ClaimSubscription.objects.create(
        org=org, channel="email", target="leaver@example.com, owner@example.com"
    )
    client.force_login(owner)
    client.post(f"/org/members/{Membership.objects.get(org=org, user=leaver).pk}/remove/")
    ledger.refresh_from_db()
    assert ledger.addresses == ["owner@example.com"] and ledger.active
