"""Public pages under hostile use: the shared page cache, CSRF, headers, cache flooding."""

from __future__ import annotations

import pytest
import redis
from django.conf import settings as django_settings
from django.test import Client

from tests.reviews import ingest_reviewed

pytestmark = pytest.mark.django_db


def csrf_cookie(client: Client) -> str:
    assert client.get("/accounts/login/").status_code == 200
    return client.cookies["csrftoken"].value


def test_a_cached_page_never_carries_another_visitors_csrf_token():
    first, second = Client(enforce_csrf_checks=True), Client(enforce_csrf_checks=True)
    first_token = csrf_cookie(first)
    rendered = first.get("/")  # renders and stores the page
    served = second.get("/")  # served from the cache to a cookie-less visitor
    assert rendered.status_code == served.status_code == 200
    assert rendered.content == served.content
    page = served.content.decode()
    # No token of any visitor's, masked or not, is written into a shared page.
    assert first_token not in page and "X-CSRFToken" not in page
    assert "csrfmiddlewaretoken" not in page
    assert "csrftoken" not in served.cookies and "Set-Cookie" not in served.headers
    # The second visitor's own cookie passes CSRF (the sign-in form answers: wrong password);
    # the first visitor's does not.
    second_token = csrf_cookie(second)
    wrong = {"login": "nobody@example.com", "password": "wrong"}
    own = second.post("/accounts/login/", wrong, HTTP_X_CSRFTOKEN=second_token)
    assert own.status_code == 200
    assert second.post("/accounts/login/", wrong, HTTP_X_CSRFTOKEN=first_token).status_code == 403


def test_unknown_query_parameters_never_fill_the_page_cache():
    if not django_settings.REDIS_URL:
        pytest.fail("REDIS_URL is not set: run the suite with scripts/test")
    client = redis.Redis.from_url(django_settings.REDIS_URL)
    Client().get("/")
    before = len(client.keys("*page:*"))
    for n in range(50):
        assert Client().get(f"/?x={n}").status_code == 200
    assert len(client.keys("*page:*")) == before


def test_pages_carry_a_content_security_policy_without_inline_scripts():
    response = Client().get("/")
    policy = response.headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy.split("style-src")[0]
    assert "<script>" not in response.content.decode()


def test_a_staff_page_sends_a_visitor_to_a_sign_in_page_that_exists(settings):
    settings.DEBUG = False
    client = Client()
    response = client.get("/endpoints/")
    assert response.status_code == 302
    assert client.get(response.headers["Location"]).status_code == 200


def _page_keys() -> int:
    if not django_settings.REDIS_URL:
        pytest.fail("REDIS_URL is not set: run the suite with scripts/test")
    return len(redis.Redis.from_url(django_settings.REDIS_URL).keys("*page:*"))


def test_query_values_the_page_does_not_accept_never_fill_the_page_cache():
    from apps.accounts.services import organization_get_or_create
    from tests.factories import document

    ingest_reviewed(
        document=document(model="GLM 5.2"), org=organization_get_or_create(slug="flood")
    )
    before = _page_keys()
    for n in range(500):
        assert Client().get(f"/?model=flood-{n}").status_code == 200
    hostile = ["/?page=99999999999999999999", "/?sort=x", "/?tier=x", "/?model=GLM+5.2&model=y"]
    for url in hostile + ["/?accelerator=x", "/?scenario=x", "/?y=x", "/?format=x"]:
        assert Client().get(url).status_code == 200
    assert _page_keys() == before
    # The same page under a slug it accepts is stored once: the check above can fail.
    assert Client().get("/?model=GLM+5.2&accelerator=MI355X").status_code == 200
    assert _page_keys() == before + 1
