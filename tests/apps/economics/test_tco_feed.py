"""The TCO feed opens in a spreadsheet: the CSV read with the standard library has the
documented header, and its rows are the JSON API's, in the same stable order; an unchanged
feed answers 304 to its ETag; `date=` prices with the set in force on that date."""

import csv
import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command

from apps.economics.feed import TCO_COLUMNS
from workers.accelerator_specs import SHIPPED_FILE

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[3]
FEED = "/api/v1/economics/tco-feed"
QUERY = {"model": "DeepSeek-R1-0528", "scenario": "8k-1k"}


def test_the_csv_has_the_documented_header_and_the_json_rows_in_the_same_order(client):
    call_command("loadreference", verbosity=0)
    body = client.get(FEED, QUERY).json()
    response = client.get(FEED, {**QUERY, "format": "csv"})
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    header, data = rows[0], rows[1:]
    assert header == body["columns"] == list(TCO_COLUMNS)
    documented = (ROOT / "docs" / "tco-feed.md").read_text()
    assert all(f"`{name}`" in documented for name in header)
    assert len(data) == len(body["rows"]) > 0
    # One configuration × SLO tier × price tier a row, priced: the first priced row agrees.
    index, row = next((i, r) for i, r in enumerate(body["rows"]) if r["usd_per_mtok_output"])
    as_text = {k: "" if v is None else str(v) for k, v in row.items()}
    assert dict(zip(header, data[index], strict=True)) == as_text
    keys = [(r["deployment_id"], r["slo_tier"], r["price_tier"]) for r in body["rows"]]
    assert len(set(keys)) == len(keys)
    assert {r["price_tier"] for r in body["rows"]} == {
        "owning_hyperscaler",
        "owning_neocloud",
        "rental_3yr",
    }
    assert row["denominator"].startswith("all deployed GPUs")
    assert row["output_tok_s_per_mw"] == pytest.approx(
        row["output_tok_s_per_gpu"] * 1000 / row["all_in_kw_per_gpu"], rel=1e-6
    )

    # The feed carries an ETag; asked again with it, unchanged, it answers 304.
    tag = response["ETag"]
    assert tag
    again = client.get(FEED, {**QUERY, "format": "csv"}, HTTP_IF_NONE_MATCH=tag)
    assert again.status_code == 304

    # date= prices with the set in force then (the oldest set, on its first day).
    sets = json.loads(SHIPPED_FILE.read_text())["price_sets"]
    oldest = min(sets, key=lambda s: s["in_force_from"])
    dated = client.get(FEED, {**QUERY, "date": oldest["in_force_from"]}).json()
    assert dated["price_set"]["name"] == oldest["name"]
    assert {r["price_set"] for r in dated["rows"]} == {oldest["name"]}
    assert client.get(FEED, {**QUERY, "date": "1999-01-01"}).status_code == 422
