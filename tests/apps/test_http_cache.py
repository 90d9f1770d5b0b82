"""Cache headers a CDN can use (apps/http_cache.py): public pages and API reads carry an ETag
and Last-Modified from the runs version and answer revalidations with 304 until a run lands;
anything personal (signed in, a token, a CSRF token) is private and never stored."""

from __future__ import annotations

import copy
import re
import time

import httpx
import pytest
from django.core.cache import cache
from django.test import Client
from django.utils.http import http_date

from apps.runs.services import run_ingest, runs_version
from tests.faults.conftest import dead_url

pytestmark = pytest.mark.django_db

PUBLIC_PAGES = ["/", "/runs/", "/methodology/", "/costs/", "/costs/claim/", "/accuracy/"]


def land_a_run(document, capture, key: str, *, is_public: bool = True):
    """Stores a run and runs its on-commit hooks (the runs version bump) as a commit would."""
    body = copy.deepcopy(document)
    body["idempotency_key"] = f"http-cache-{key}-0000"
    with capture(execute=True):
        return run_ingest(document=body, org=None, is_public=is_public).run


def directives(response) -> set[str]:
    return {part.strip() for part in response.headers.get("Cache-Control", "").split(",")}


@pytest.mark.parametrize("path", PUBLIC_PAGES + ["/api/v1/runs", "/api/v1/accelerators"])
def test_an_unchanged_public_answer_is_revalidated_with_a_304(
    path, document, django_capture_on_commit_callbacks
):
    land_a_run(document, django_capture_on_commit_callbacks, "seed")
    client = Client()
    first = client.get(path)
    assert first.status_code == 200
    assert {"public", "max-age=0", "s-maxage=60", "stale-while-revalidate=300"} <= directives(first)
    etag = first.headers["ETag"]
    assert etag.startswith('W/"')

    again = client.get(path, headers={"If-None-Match": etag})
    assert again.status_code == 304
    assert again.content == b""
    assert again.headers["ETag"] == etag
    assert "public" in directives(again)


def test_a_run_landing_answers_the_old_etag_with_the_new_page(
    document, django_capture_on_commit_callbacks
):
    land_a_run(document, django_capture_on_commit_callbacks, "first")
    client = Client()
    before = client.get("/runs/")
    version = runs_version()

    run = land_a_run(document, django_capture_on_commit_callbacks, "second")

    assert runs_version() != version
    after = client.get("/runs/", headers={"If-None-Match": before.headers["ETag"]})
    assert after.status_code == 200
    assert after.headers["ETag"] != before.headers["ETag"]
    assert f"/runs/{run.pk}/" in after.content.decode()
    assert f"/runs/{run.pk}/" not in before.content.decode()


def test_if_modified_since_answers_304_until_a_run_lands(
    document, django_capture_on_commit_callbacks, settings
):
    land_a_run(document, django_capture_on_commit_callbacks, "first")
    # The version was first seen an hour ago and no periodic turnover falls in between.
    settings.HTTP_CACHE_REFRESH_S = 10**9
    an_hour_ago = time.time() - 3600
    cache.set(f"runs:version:{runs_version()}:seen", an_hour_ago)
    client = Client()

    first = client.get("/")
    assert first.headers["Last-Modified"] == http_date(int(an_hour_ago))
    unchanged = client.get("/", headers={"If-Modified-Since": first.headers["Last-Modified"]})
    assert unchanged.status_code == 304

    land_a_run(document, django_capture_on_commit_callbacks, "second")
    changed = client.get("/", headers={"If-Modified-Since": first.headers["Last-Modified"]})
    assert changed.status_code == 200


def test_the_page_and_its_htmx_partial_have_different_etags():
    client = Client()
    page = client.get("/runs/")
    partial = client.get("/runs/", headers={"HX-Request": "true"})
    assert page.headers["ETag"] != partial.headers["ETag"]
    # The partial's ETag does not revalidate the page (a CDN keys them apart by Vary too).
    crossed = client.get("/runs/", headers={"If-None-Match": partial.headers["ETag"]})
    assert crossed.status_code == 200 and b"<html" in crossed.content
    assert {"HX-Request", "Cookie"} <= {v.strip() for v in page.headers["Vary"].split(",")}


@pytest.mark.parametrize("path", ["/", "/runs/", "/costs/", "/api/v1/runs"])
def test_signed_in_pages_carry_no_public_cache_headers(path, person, org):
    anonymous = Client().get(path)
    client = Client()
    client.force_login(person(org, "member"))

    response = client.get(path, headers={"If-None-Match": anonymous.headers["ETag"]})

    # Not the anonymous page's 304: the signed-in page holds the organization's private runs.
    assert response.status_code == 200
    assert {"private", "no-store"} <= directives(response)
    assert "public" not in directives(response)
    assert "s-maxage=60" not in directives(response)
    assert "ETag" not in response.headers and "Last-Modified" not in response.headers


def test_an_api_read_with_a_token_is_private_and_the_public_one_varies_on_it(auth):
    public = Client().get("/api/v1/runs")
    assert "Authorization" in public.headers["Vary"]

    mine = Client().get("/api/v1/runs", headers={"If-None-Match": public.headers["ETag"]}, **auth)

    assert mine.status_code == 200
    assert {"private", "no-store"} <= directives(mine) and "ETag" not in mine.headers


def test_a_page_with_a_csrf_token_is_private_and_public_pages_carry_none():
    client = Client(enforce_csrf_checks=True)
    login = client.get("/accounts/login/")
    assert "csrfmiddlewaretoken" in login.content.decode()
    assert {"private", "no-store"} <= directives(login) and "ETag" not in login.headers
    token = client.cookies["csrftoken"].value

    # A visitor who holds a CSRF cookie still gets the shared page, with no token in it.
    for path in PUBLIC_PAGES:
        page = client.get(path)
        assert "public" in directives(page), path
        body = page.content.decode()
        assert token not in body and "csrfmiddlewaretoken" not in body, path
        assert not page.cookies and "Set-Cookie" not in page.headers, path


def test_answers_that_are_not_public_pages_are_not_stored_as_such():
    missing = Client().get("/runs/999999/")
    assert missing.status_code == 404
    assert "public" not in directives(missing) and "ETag" not in missing.headers
    assert "no-store" in Client().get("/readyz").headers["Cache-Control"]


def test_a_private_run_is_not_revalidated_into_an_anonymous_cache(
    document, django_capture_on_commit_callbacks
):
    run = land_a_run(document, django_capture_on_commit_callbacks, "private", is_public=False)
    response = Client().get(f"/runs/{run.pk}/")
    assert response.status_code == 404
    assert "ETag" not in response.headers and "public" not in directives(response)


def test_without_redis_pages_are_public_but_carry_no_validators(settings):
    # The version is unknown while Redis is down: an ETag could claim a page unchanged.
    settings.CACHES = {
        "default": {
            "BACKEND": "apps.cache.FailSoftRedisCache",
            "LOCATION": dead_url("redis", "/0"),
            "OPTIONS": {"TIMEOUT_S": 1, "RETRY_S": 5},
        }
    }
    response = Client().get("/runs/", headers={"If-None-Match": 'W/"anything"'})
    assert response.status_code == 200
    assert "public" in directives(response)
    assert "ETag" not in response.headers and "Last-Modified" not in response.headers


def test_the_run_and_deployment_pages_revalidate_too(document, django_capture_on_commit_callbacks):
    run = land_a_run(document, django_capture_on_commit_callbacks, "pages")
    client = Client()
    for path in (f"/runs/{run.pk}/", f"/deployments/{run.deployment_id}/"):
        first = client.get(path)
        assert first.status_code == 200 and "public" in directives(first), path
        again = client.get(path, headers={"If-None-Match": first.headers["ETag"]})
        assert again.status_code == 304, path


def submit(http, token: str, document, key: str):
    body = copy.deepcopy(document)
    body["idempotency_key"] = f"http-cache-served-{key}-0000"
    response = http.post("/api/v1/runs", json=body, headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 201, response.text[:500]
    return response.json()["id"]


@pytest.mark.django_db(transaction=True)
def test_the_production_server_answers_revalidations_over_http(
    production_server, issued, document, person, org
):
    """Through a real HTTP client against the production command (gunicorn + uvicorn)."""
    url = production_server()
    with httpx.Client(base_url=url, timeout=60) as http:
        submit(http, issued.plaintext, document, "first")
        for path in ("/", "/runs/", "/api/v1/runs"):
            first = http.get(path)
            assert first.status_code == 200, path
            assert {
                "public",
                "max-age=0",
                "s-maxage=60",
                "stale-while-revalidate=300",
            } <= directives(first)
            again = http.get(path, headers={"If-None-Match": first.headers["ETag"]})
            assert again.status_code == 304 and again.content == b"", path
            assert again.headers["ETag"] == first.headers["ETag"], path

        before = http.get("/runs/")
        second = submit(http, issued.plaintext, document, "second")
        after = http.get("/runs/", headers={"If-None-Match": before.headers["ETag"]})
        assert after.status_code == 200
        assert after.headers["ETag"] != before.headers["ETag"]
        assert f"/runs/{second}/" in after.text

        # Signed in through the server's own sign-in form: never the anonymous 304, and
        # nothing a cache may keep.
        cookies = sign_in(http, person(org, "member"))
        mine = http.get(
            "/runs/",
            headers={"If-None-Match": after.headers["ETag"], "Cookie": cookies},
        )
        assert mine.status_code == 200
        assert {"private", "no-store"} <= directives(mine) and "public" not in directives(mine)
        assert "ETag" not in mine.headers and "Last-Modified" not in mine.headers

        # A visitor holding a CSRF cookie gets the shared page: no token in it, no cookie set.
        login = http.get("/accounts/login/")
        assert {"private", "no-store"} <= directives(login)
        csrf = set_cookies(login)["csrftoken"]
        shared = http.get("/runs/", headers={"Cookie": f"csrftoken={csrf}"})
        assert "public" in directives(shared)
        assert "csrfmiddlewaretoken" not in shared.text and csrf not in shared.text
        assert "set-cookie" not in shared.headers


def set_cookies(response: httpx.Response) -> dict[str, str]:
    """The cookies a response sets, read from its headers: the production command marks them
    Secure, which a client on plain-HTTP loopback would otherwise refuse to send back."""
    found = {}
    for header in response.headers.get_list("set-cookie"):
        name, _, rest = header.partition("=")
        found[name.strip()] = rest.split(";", 1)[0]
    return found


def sign_in(http: httpx.Client, user) -> str:
    form = http.get("/accounts/login/")
    csrf = set_cookies(form)["csrftoken"]
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text).group(1)
    answer = http.post(
        "/accounts/login/",
        data={"login": user.email, "password": "pw", "csrfmiddlewaretoken": token},
        headers={"Cookie": f"csrftoken={csrf}"},
    )
    assert answer.status_code == 302, answer.text[:500]
    session = set_cookies(answer)["sessionid"]
    return f"csrftoken={csrf}; sessionid={session}"


def test_a_revalidation_is_answered_without_touching_the_database(
    document, django_capture_on_commit_callbacks, django_assert_num_queries
):
    land_a_run(document, django_capture_on_commit_callbacks, "no-render")
    client = Client()
    etag = client.get("/").headers["ETag"]
    with django_assert_num_queries(0):
        assert client.get("/", headers={"If-None-Match": etag}).status_code == 304
