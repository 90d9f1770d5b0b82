"""Two owners acting against each other at the same instant, over HTTP against PostgreSQL:
removing each other, demoting each other, both leaving. Whatever the order the server runs
them in, the organization keeps an owner (issue 53)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from django.test import Client

from apps.accounts.models import Membership, Role
from apps.accounts.services import member_add, organization_create

ROUNDS = 6


def signed_in(url: str, user) -> httpx.Client:
    """An HTTP client holding the person's session and the CSRF token a browser would send."""
    django_client = Client()
    django_client.force_login(user)
    http = httpx.Client(
        base_url=url,
        cookies={"sessionid": django_client.cookies["sessionid"].value},
        timeout=60,
    )
    http.get("/org/")
    http.headers["X-CSRFToken"] = http.cookies["csrftoken"]
    return http


def two_owners(person, n: int):
    first = person(email=f"first{n}@example.com")
    second = person(email=f"second{n}@example.com")
    org = organization_create(name=f"Race {n}", owner=first)
    member_add(org=org, user=second, role=Role.OWNER)
    mine = Membership.objects.get(org=org, user=first)
    theirs = Membership.objects.get(org=org, user=second)
    return org, (first, mine), (second, theirs)


def race(url: str, posts: list[tuple[object, str, dict]]) -> list[int]:
    """Each (person, path, form) posted by its own client, all released at once."""
    clients = [signed_in(url, who) for who, _, _ in posts]
    barrier = threading.Barrier(len(posts))

    def post(n: int) -> int:
        _, path, form = posts[n]
        barrier.wait()
        return clients[n].post(path, data=form).status_code

    try:
        with ThreadPoolExecutor(len(posts)) as pool:
            return list(pool.map(post, range(len(posts))))
    finally:
        for client in clients:
            client.close()


@pytest.mark.parametrize("kind", ["remove each other", "demote each other", "both leave"])
def test_two_owners_acting_at_once_never_leave_the_organization_without_one(
    live_server, transactional_db, person, kind
):
    for n in range(ROUNDS):
        org, (first, mine), (second, theirs) = two_owners(person, n)
        if kind == "remove each other":
            posts = [
                (first, f"/org/members/{theirs.pk}/remove/", {}),
                (second, f"/org/members/{mine.pk}/remove/", {}),
            ]
        elif kind == "demote each other":
            posts = [
                (first, f"/org/members/{theirs.pk}/role/", {"role": "admin"}),
                (second, f"/org/members/{mine.pk}/role/", {"role": "admin"}),
            ]
        else:
            posts = [
                (first, f"/org/members/{mine.pk}/remove/", {}),
                (second, f"/org/members/{theirs.pk}/remove/", {}),
            ]
        statuses = race(live_server.url, posts)
        # 404: the other went first and this person is no longer a member to act.
        assert all(status in (302, 403, 404) for status in statuses), statuses
        owners = Membership.objects.filter(org=org, role=Role.OWNER)
        assert owners.exists(), f"round {n} ({kind}) left {org.slug} without an owner"
