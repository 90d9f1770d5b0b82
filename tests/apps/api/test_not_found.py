"""A missing run is the site's own 404 page, with DEBUG on (the local demo) as well as off."""

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("debug", [True, False])
def test_a_missing_run_answers_the_sites_404_page(settings, debug):
    settings.DEBUG = debug
    response = Client().get("/runs/999999/")
    assert response.status_code == 404
    html = response.content.decode()
    assert "<h1>Page not found</h1>" in html and 'class="site"' in html
    assert "URLconf" not in html and "Raised by" not in html


def test_a_missing_api_object_still_answers_json(settings):
    settings.DEBUG = True
    response = Client().get("/api/v1/runs/999999")
    assert response.status_code == 404
    assert response.headers["Content-Type"].startswith("application/json")
