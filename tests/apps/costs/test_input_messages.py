import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def reference():
    call_command("loadreference", no_inferencex=True, verbosity=0)


def test_an_unknown_tier_is_named_on_the_page_with_the_tiers_there_are(client):
    html = client.get("/costs/?tier=nope").content.decode()
    assert "Tier: no accelerator has a “nope” price" in html
    assert "owning (hyperscaler)" in html


def test_a_download_with_an_unknown_tier_is_refused_naming_field_and_label(client):
    response = client.get("/costs/export.csv?tier=nope")
    assert response.status_code == 422
    (problem,) = response.json()["detail"]
    assert problem["path"] == "tier" and problem["label"] == "Tier"


def test_errors_use_the_forms_labels_not_query_names(client):
    html = client.get("/costs/?requests_per_day=-5").content.decode()
    assert "<strong>Requests/day</strong>: must be greater than zero" in html


def test_a_negative_claimed_ratio_is_refused_with_its_label(client):
    html = client.get("/costs/claim/?throughput_ratio=-1").content.decode()
    assert "<strong>Throughput A ÷ B</strong>: must be greater than zero (got -1)" in html
