"""Price profiles and saved pages through Django's test client: who may save, what a bad
input answers, one active profile, permalinks for anyone, and the API and CSV reading them."""

from __future__ import annotations

import csv
import io
from urllib.parse import parse_qs, urlparse

import pytest

from apps.accounts.services import organization_get_or_create
from apps.costs.models import PriceProfile, SavedPage
from apps.costs.procurement_export import EXPORT_COLUMNS
from apps.runs.services import run_ingest

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("costs_site")]


@pytest.fixture
def run(document, org):
    return run_ingest(document=document, org=org, is_public=True).run


def save(client, **fields):
    return client.post("/costs/profiles/", {"name": "Acme 2026", **fields})


def test_an_anonymous_visitor_cannot_save_a_profile(client):
    assert save(client, price_MI355X="0.9").status_code == 403
    assert not PriceProfile.objects.exists()


def test_a_viewer_cannot_save_a_profile(client, org, person):
    client.force_login(person(org, role="viewer"))
    assert save(client, price_MI355X="0.9").status_code == 403
    assert not PriceProfile.objects.exists()


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"price_MI355X": "cheap"}, "price_MI355X"),
        ({"price_MI355X": "-1"}, "price_MI355X"),
        ({"price_MI355X": "0.9", "name": ""}, "name"),
        ({}, "price"),
        ({"price_MI355X": "0.9", "sell_output_usd_per_mtok": "x"}, "sell_output_usd_per_mtok"),
    ],
)
def test_a_bad_profile_answers_422_naming_the_field_and_stores_nothing(
    client, org, person, fields, field
):
    client.force_login(person(org))
    response = save(client, **fields)
    assert response.status_code == 422
    assert field in {d["path"] for d in response.json()["detail"]}
    assert not PriceProfile.objects.exists()


def test_a_saved_profile_is_the_one_active_and_prices_the_page(client, org, person, run):
    client.force_login(person(org))
    assert save(client, name="first", price_MI355X="0.5").status_code == 302
    assert save(client, name="second", price_MI355X="0.9", price_B200="2").status_code == 302
    active = PriceProfile.objects.get(org=org, active=True)
    assert active.name == "second"
    assert active.usd_per_gpu_hour == {"MI355X": 0.9, "B200": 2.0}
    page = client.get("/costs/").content.decode()
    assert "$0.9/GPU-hr" in page and "(own, your profile “second”)" in page

    client.post("/costs/profiles/active/", {"profile": ""})
    assert not PriceProfile.objects.filter(active=True).exists()
    assert "your profile" not in client.get("/costs/").content.decode()


def test_a_saved_comparison_has_a_permalink_anyone_can_open(client, org, person, run):
    member = person(org)
    client.force_login(member)
    save(client, price_MI355X="0.9")
    page = client.get("/costs/?ttft_s_max=2.22").content.decode()
    assert "permalink" in page
    response = client.post(
        "/costs/saved/",
        {"name": "Q3 buy", "kind": "comparison", "query": "ttft_s_max=2.22&price_MI355X=0.9"},
    )
    saved = SavedPage.objects.get(org=org, name="Q3 buy")
    assert response.status_code == 302 and response["Location"] == f"/costs/s/{saved.slug}/"
    client.logout()
    opened = client.get(f"/costs/s/{saved.slug}/")
    assert opened.status_code == 302
    assert parse_qs(urlparse(opened["Location"]).query)["price_MI355X"] == ["0.9"]
    assert client.get("/costs/s/no-such-page/").status_code == 404


def test_another_organization_keeps_the_reference_prices(client, org, person, run):
    client.force_login(person(org))
    save(client, price_MI355X="0.9")
    client.logout()
    client.force_login(person(organization_get_or_create(slug="globex")))
    assert "your profile" not in client.get("/costs/").content.decode()


def test_the_api_and_the_csv_price_with_the_callers_profile(client, org, person, run, auth):
    client.force_login(person(org))
    save(client, price_MI355X="0.9")
    answer = client.get("/api/v1/costs/procurement", **auth).json()
    assert answer["price_profile"] == "Acme 2026"
    assert {r["usd_per_gpu_hour"] for r in answer["rows"]} == {0.9}
    rows = list(csv.DictReader(io.StringIO(client.get("/costs/export.csv").content.decode())))
    assert list(rows[0]) == list(EXPORT_COLUMNS)
    assert rows[0]["usd_per_gpu_hour"] == "0.9"
    assert rows[0]["price_source"] == "own: your profile “Acme 2026”"
    assert float(rows[0]["usd_per_request"]) > 0


def test_the_claim_checker_prices_each_side_from_the_profile(client, org, person):
    client.force_login(person(org))
    save(client, price_MI355X="0.9")
    page = client.get("/costs/claim/").content.decode()
    assert "price profile “Acme 2026”" in page
    assert 'value="0.9"' in page


def test_the_printable_page_is_the_result_without_the_form(client, run):
    page = client.get("/costs/?ttft_s_max=2.22&print=1").content.decode()
    assert 'id="cost-form"' not in page
    assert 'id="cost-table"' in page and 'id="priced-by"' in page


def test_a_saved_workload_keeps_the_workload_and_not_the_prices(client, org, person):
    client.force_login(person(org))
    client.post(
        "/costs/saved/",
        {
            "name": "chat",
            "kind": "workload",
            "query": "tokens_per_day=2e9&workload_unit=tokens_per_day&price_B200=2&ttft_s_max=2",
        },
    )
    saved = SavedPage.objects.get(org=org, name="chat")
    assert parse_qs(saved.query) == {"tokens_per_day": ["2e9"], "workload_unit": ["tokens_per_day"]}


def test_the_json_download_states_the_profile_prices_its_rows_used(client, org, person, run):
    client.force_login(person(org))
    save(client, price_MI355X="0.9", sell_output_usd_per_mtok="3")
    body = client.get("/costs/export.json").json()
    assert body["state"]["price_MI355X"] == "0.9"
    assert body["state"]["sell_output_usd_per_mtok"] == "3"
    assert {row["usd_per_gpu_hour"] for row in body["rows"]} == {0.9}
