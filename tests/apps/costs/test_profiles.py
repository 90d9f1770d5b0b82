"""Price profiles and saved pages through Django's test client: who may save, what a bad
input answers, one active profile, permalinks for anyone, and the API and CSV reading them."""

from __future__ import annotations

import csv
import io
from urllib.parse import parse_qs, urlparse

import pytest

from apps.accounts.services import organization_get_or_create
from apps.costs.formulas import CostInputError
from apps.costs.models import PriceProfile, SavedPage
from apps.costs.procurement_export import EXPORT_COLUMNS
from apps.costs.services import price_profile_save
from tests.reviews import ingest_reviewed

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("costs_site")]


@pytest.fixture
def run(document, org):
    return ingest_reviewed(document=document, org=org, is_public=True).run


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


def refusals(response) -> list[tuple[str, str]]:
    assert response.status_code == 422
    return [(d["path"], d["message"]) for d in response.json()["detail"]]


def test_saving_a_profile_reads_a_price_as_the_calculator_does(client, org, person):
    client.force_login(person(org))
    fields = {"price_MI355X": " 1,200 ", "sell_output_usd_per_mtok": "1,000"}
    assert save(client, **fields).status_code == 302
    profile = PriceProfile.objects.get(org=org)
    assert profile.usd_per_gpu_hour == {"MI355X": 1200.0}
    assert profile.sell_output_usd_per_mtok == 1000.0


@pytest.mark.parametrize("text", ["nan", "inf", "-inf", "1e400"])
def test_saving_a_profile_refuses_a_price_that_is_not_finite(client, org, person, text):
    client.force_login(person(org))
    expected = [("price_MI355X", "must be a finite number")]
    assert refusals(save(client, price_MI355X=text)) == expected
    sold = {"price_MI355X": "1", "sell_input_usd_per_mtok": text}
    assert refusals(save(client, **sold)) == [("sell_input_usd_per_mtok", expected[0][1])]
    assert not PriceProfile.objects.exists()


def test_saving_a_profile_refuses_every_negative_price_as_the_calculator_does(client, org, person):
    client.force_login(person(org))
    fields = {
        "price_MI355X": "-1",
        "price_B200": "-2",
        "sell_output_usd_per_mtok": "-3",
        "sell_cached_input_usd_per_mtok": "-4",
    }
    assert refusals(save(client, **fields, name="")) == [
        ("price_MI355X", "must not be negative (got -1)"),
        ("price_B200", "must not be negative (got -2)"),
        ("sell_cached_input_usd_per_mtok", "must not be negative (got -4)"),
        ("sell_output_usd_per_mtok", "must not be negative (got -3)"),
    ]


def test_saving_a_profile_quotes_an_unreadable_price_as_the_calculator_does(client, org, person):
    client.force_login(person(org))
    response = save(client, price_MI355X=" ch,eap ")
    assert refusals(response) == [("price_MI355X", "must be a number (got 'cheap')")]


@pytest.mark.parametrize(
    ("url", "fields", "field"),
    [
        ("/costs/profiles/", {"name": "Acme\x00", "price_MI355X": "1"}, "name"),
        ("/costs/profiles/", {"name": "Acme", "price_MI\x00": "1"}, "price_MI\x00"),
        ("/costs/profiles/active/", {"profile": "Acme\x00"}, "profile"),
        ("/costs/saved/", {"name": "Q3\x00", "query": "ttft_s_max=2"}, "name"),
        ("/costs/saved/", {"name": "Q3", "query": "ttft_s_max=2\x00"}, "query"),
    ],
)
def test_a_nul_byte_in_what_would_be_saved_answers_422_not_500(
    client, org, person, url, fields, field
):
    client.force_login(person(org))
    response = client.post(url, fields)
    assert refusals(response) == [(field, "must not contain a NUL byte")]
    assert not PriceProfile.objects.exists() and not SavedPage.objects.exists()


def test_a_saved_page_with_a_nul_byte_in_its_slug_is_not_found(client):
    assert client.get("/costs/s/a%00b/").status_code == 404


def test_a_saved_page_is_a_comparison_unless_the_form_says_otherwise(client, org, person):
    client.force_login(person(org))
    client.post("/costs/saved/", {"name": "Q3", "query": "ttft_s_max=2&price_B200=2"})
    saved = SavedPage.objects.get(org=org, name="Q3")
    assert saved.kind == "comparison" and saved.query == "ttft_s_max=2&price_B200=2"


def test_a_profile_saved_from_the_page_goes_back_only_to_a_cost_page(client, org, person):
    client.force_login(person(org))
    back = save(client, price_MI355X="1", next="/costs/claim/?x=1")
    assert back["Location"] == "/costs/claim/?x=1"
    assert save(client, price_MI355X="1", next="https://evil.example/")["Location"] == "/costs/"


def test_the_service_refuses_a_negative_price_in_the_words_of_the_forms(org, person):
    with pytest.raises(CostInputError) as refused:
        price_profile_save(org=org, user=person(org), name="x", usd_per_gpu_hour={"MI355X": -1})
    assert (refused.value.field, refused.value.message) == (
        "price_MI355X",
        "must not be negative (got -1)",
    )
