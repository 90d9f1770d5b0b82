"""Views that answer with the page or its partial say so (Vary: HX-Request), both ways."""

import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("path", ["/", "/runs/", "/costs/", "/costs/claim/"])
def test_a_page_and_its_partial_each_vary_on_hx_request(client, path):
    page = client.get(path)
    partial = client.get(path, headers={"HX-Request": "true"})
    assert page.status_code == partial.status_code == 200
    for response in (page, partial):
        assert "HX-Request" in response.headers.get("Vary", "")
    assert b"<html" in page.content and b"<html" not in partial.content


def test_htmx_restoring_history_gets_the_whole_page(client):
    restore = client.get(
        "/runs/", headers={"HX-Request": "true", "HX-History-Restore-Request": "true"}
    )
    assert b"<html" in restore.content
