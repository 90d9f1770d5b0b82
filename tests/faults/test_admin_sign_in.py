"""Finding 5: the admin has no sign-in form of its own: it sends staff to allauth's, whose
lockout after failed attempts then covers every way in."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(person):
    user = person(email="ops@example.com")
    user.is_staff = user.is_superuser = True
    user.set_password("right-password")
    user.save()
    return user


def signed_in(client) -> bool:
    return "_auth_user_id" in client.session


def test_the_admin_form_authenticates_no_one_not_even_after_30_wrong_passwords(client, staff):
    for _ in range(30):
        wrong = client.post("/admin/login/", {"username": staff.username, "password": "nope"})
        assert wrong.status_code == 302 and not signed_in(client)
    right = client.post("/admin/login/", {"username": staff.username, "password": "right-password"})
    assert right.status_code == 302 and right["Location"].startswith("/accounts/login/")
    assert not signed_in(client)


def test_allauth_locks_the_address_out_after_failed_attempts(client, staff):
    for _ in range(30):
        client.post("/accounts/login/", {"login": staff.email, "password": "nope"})
    client.post("/accounts/login/", {"login": staff.email, "password": "right-password"})
    assert not signed_in(client)


def test_staff_sign_in_through_allauth_and_reach_the_admin(client, staff):
    start = client.get("/admin/")
    assert start.status_code == 302
    to_login = client.get(start["Location"])
    assert to_login["Location"] == "/accounts/login/?next=%2Fadmin%2F"
    signed = client.post(to_login["Location"], {"login": staff.email, "password": "right-password"})
    assert signed.status_code == 302 and signed["Location"] == "/admin/"
    assert client.get("/admin/").status_code == 200
    assert client.get("/admin/login/?next=https://evil.example/").url == "/admin/"


def test_a_signed_in_person_without_staff_rights_is_refused_not_looped(client, person):
    client.force_login(person())
    assert client.get("/admin/login/?next=/admin/").status_code == 403
