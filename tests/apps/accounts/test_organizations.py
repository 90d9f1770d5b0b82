"""Organizations, roles, invitations and tokens through the /org/ pages and the API."""

import pytest

from apps.accounts.models import ApiToken, AuditEvent, Membership, Role
from apps.accounts.services import organization_create, token_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def owned(client, person):
    owner = person(email="owner@example.com")
    org = organization_create(name="Acme Procurement", owner=owner)
    client.force_login(owner)
    return org


def invite_link(client, role: str = "member") -> str:
    client.post("/org/invite/", {"role": role, "email": "new@example.com"})
    page = client.get("/org/").content.decode()
    return page.split('id="invite-link">')[1].split("<")[0]


def test_creating_an_organization_makes_its_creator_owner(client, person):
    client.force_login(person())
    client.post("/org/new/", {"name": "Acme Procurement"})
    membership = Membership.objects.get()
    assert (membership.org.slug, membership.role) == ("acme-procurement", Role.OWNER)
    assert client.post("/org/new/", {"name": "  "}).status_code == 302
    assert Membership.objects.count() == 1


def test_an_invitation_link_makes_one_member_with_its_role_and_then_is_spent(client, owned, person):
    link = invite_link(client, "viewer")
    assert link.startswith("http://testserver/org/join/")
    assert link not in client.get("/org/").content.decode()  # shown once
    newcomer = person(email="new@example.com")  # the address it was sent to
    client.force_login(newcomer)
    path = link.removeprefix("http://testserver")
    assert "Join Acme Procurement" in client.get(path).content.decode()
    client.post(path)
    assert Membership.objects.get(user=newcomer).role == Role.VIEWER
    client.force_login(person())
    assert client.get(path).status_code == 404  # used
    assert client.post(path).status_code == 404


def test_anonymous_visitors_are_asked_to_sign_in_before_joining(client, owned):
    path = invite_link(client).removeprefix("http://testserver")
    client.logout()
    response = client.get(path)
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_members_and_viewers_cannot_invite_create_tokens_or_change_roles(client, owned, person):
    for role in (Role.MEMBER, Role.VIEWER):
        client.force_login(person(owned, role))
        assert client.post("/org/invite/", {"role": "admin"}).status_code == 403
        assert client.post("/org/tokens/", {"name": "x"}).status_code == 403
        mine = Membership.objects.get(org=owned, user__email="owner@example.com")
        assert client.post(f"/org/members/{mine.pk}/role/", {"role": "viewer"}).status_code == 403
    assert not owned.invitations.exists() and not owned.tokens.exists()


def test_the_last_owner_cannot_leave_but_a_member_can_and_an_admin_removes(client, owned, person):
    mine = Membership.objects.get(org=owned, user__email="owner@example.com")
    client.post(f"/org/members/{mine.pk}/remove/")
    assert Membership.objects.filter(pk=mine.pk).exists()
    assert "last owner" in client.get("/org/").content.decode()
    leaver = person(owned, Role.MEMBER)
    removed = person(owned, Role.VIEWER)
    client.force_login(leaver)
    client.post(f"/org/members/{Membership.objects.get(user=leaver).pk}/remove/")
    assert not Membership.objects.filter(user=leaver).exists()
    client.force_login(person(owned, Role.ADMIN))
    client.post(f"/org/members/{Membership.objects.get(user=removed).pk}/remove/")
    assert not Membership.objects.filter(user=removed).exists()
    actions = AuditEvent.objects.filter(org=owned, action="member.removed").count()
    assert actions == 2


def test_only_an_owner_makes_an_owner(client, owned, person):
    admin = person(owned, Role.ADMIN)
    member = Membership.objects.get(user=person(owned, Role.MEMBER))
    client.force_login(admin)
    assert client.post(f"/org/members/{member.pk}/role/", {"role": "owner"}).status_code == 403
    client.post(f"/org/members/{member.pk}/role/", {"role": "admin"})
    member.refresh_from_db()
    assert member.role == Role.ADMIN


def test_a_token_is_shown_once_and_a_read_only_token_cannot_write(client, owned, document):
    client.post("/org/tokens/", {"name": "dashboards", "scope": "read"})
    page = client.get("/org/").content.decode()
    plaintext = page.split('id="new-token">')[1].split("<")[0]
    assert plaintext not in client.get("/org/").content.decode()
    token = ApiToken.objects.get(name="dashboards")
    assert token.scope == ApiToken.Scope.READ
    auth = {"HTTP_AUTHORIZATION": f"Bearer {plaintext}"}
    refused = client.post("/api/v1/runs", document, content_type="application/json", **auth)
    assert refused.status_code == 403 and "read-only" in refused.json()["detail"]
    assert client.get("/api/v1/endpoints", **auth).status_code == 200


def test_a_revoked_token_is_refused_by_the_api(client, owned):
    issued = token_create(org=owned, name="ci")
    client.post(f"/org/tokens/{issued.token.pk}/revoke/")
    auth = {"HTTP_AUTHORIZATION": f"Bearer {issued.plaintext}"}
    assert client.get("/api/v1/endpoints", **auth).status_code == 401
