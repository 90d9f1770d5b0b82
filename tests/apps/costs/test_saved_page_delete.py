"""A saved page can be deleted by a member of its organization (the role that may save, and so
already replace, it): its permalink stops working. A viewer gets 403, another organization's
member and a visitor a refusal, and the page stays."""

from __future__ import annotations

import pytest

from apps.accounts.services import organization_get_or_create
from apps.costs.models import SavedPage

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("costs_site")]


@pytest.fixture
def page(client, org, person) -> SavedPage:
    client.force_login(person(org))
    assert client.post("/costs/saved/", {"name": "Q3", "query": "ttft_s_max=2"}).status_code == 302
    client.logout()
    return SavedPage.objects.get(org=org, name="Q3")


def delete(client, page: SavedPage):
    return client.post(f"/costs/s/{page.slug}/delete/")


@pytest.mark.parametrize("role", ["member", "admin", "owner"])
def test_a_member_of_its_organization_deletes_a_saved_page(client, org, person, page, role):
    client.force_login(person(org, role=role))
    response = delete(client, page)
    assert response.status_code == 302 and response["Location"] == "/costs/"
    assert not SavedPage.objects.filter(pk=page.pk).exists()
    assert client.get(f"/costs/s/{page.slug}/").status_code == 404


def test_a_viewer_cannot_delete_a_saved_page(client, org, person, page):
    client.force_login(person(org, role="viewer"))
    assert delete(client, page).status_code == 403
    assert SavedPage.objects.filter(pk=page.pk).exists()


def test_another_organizations_admin_cannot_delete_it_nor_learn_it_exists(client, person, page):
    rival = organization_get_or_create(slug="rival")
    client.force_login(person(rival, role="admin"))
    response = delete(client, page)
    missing = client.post("/costs/s/no-such-slug/delete/")
    assert response.status_code == missing.status_code == 404
    assert SavedPage.objects.filter(pk=page.pk).exists()


def test_a_visitor_cannot_delete_a_saved_page(client, page):
    assert delete(client, page).status_code == 403
    assert SavedPage.objects.filter(pk=page.pk).exists()


def test_deleting_is_a_post_only(client, org, person, page):
    client.force_login(person(org))
    assert client.get(f"/costs/s/{page.slug}/delete/").status_code == 405
    assert SavedPage.objects.filter(pk=page.pk).exists()


def test_a_nul_byte_in_the_slug_is_not_found_not_a_500(client, org, person):
    client.force_login(person(org))
    assert client.post("/costs/s/a%00b/delete/").status_code == 404


def test_the_cost_page_offers_each_saved_page_a_delete_button(client, org, person, page):
    client.force_login(person(org))
    html = client.get("/costs/").content.decode()
    assert f'formaction="/costs/s/{page.slug}/delete/"' in html


def test_deleting_frees_a_place_in_the_budget(client, org, person, page, settings):
    settings.ORG_MAX_SAVED_PAGES = 1
    client.force_login(person(org))
    full = client.post("/costs/saved/", {"name": "Q4", "query": "ttft_s_max=3"})
    assert full.status_code == 422
    assert delete(client, page).status_code == 302
    assert client.post("/costs/saved/", {"name": "Q4", "query": "ttft_s_max=3"}).status_code == 302
