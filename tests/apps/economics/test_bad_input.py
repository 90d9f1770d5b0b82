"""Bad input to the economics API and pages: a 422 naming the field, never a 500."""

import pytest

pytestmark = pytest.mark.django_db

CASES = [
    ({"utilisation": "1.5"}, "utilisation"),
    ({"utilisation": "nan"}, "utilisation"),
    ({"licence_share": "-0.1"}, "licence_share"),
    ({"cache_hit_rate": "x"}, "cache_hit_rate"),
    ({"output_price": "-1"}, "output_price"),
    ({"megawatts": "0"}, "megawatts"),
    ({"pue": "0.5"}, "pue"),
    ({"gpus_per_node": "0"}, "gpus_per_node"),
    ({"scenario": "no-such-scenario"}, "scenario"),
    ({"serving": "both"}, "serving"),
    ({"tier": "no-such-tier"}, "tier"),
]


@pytest.mark.parametrize("path", ["margin", "fleet", "first-token"])
@pytest.mark.parametrize(("given", "field"), CASES)
def test_it_refuses_bad_input_naming_the_field(client, path, given, field):
    response = client.get(f"/api/v1/economics/{path}", given)
    assert response.status_code == 422
    assert field in [d["path"] for d in response.json()["detail"]]
    page = client.get(f"/economics/{path}/", given)
    assert page.status_code == 422
    assert f'data-field="{field}"' in page.content.decode()


def test_a_model_with_no_shipped_token_price_asks_for_one(client):
    response = client.get("/api/v1/economics/margin", {"model": "No-Such-Model"})
    assert response.status_code == 422
    assert response.json()["detail"][0]["path"] == "input_price"


def test_the_feed_refuses_a_date_before_any_price_set(client):
    response = client.get("/api/v1/economics/tco-feed", {"date": "not-a-date"})
    assert response.status_code == 422
    assert response.json()["detail"][0]["path"] == "date"
