"""/costs/'s "which is cheaper at this SLO" is the one answer service's: on the shipped
reference data its figures are those GET /api/v1/compare/answer gives for the same question."""

import re

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db
PANEL = re.compile(r'<section id="cheaper-at-slo" class="cost-card" ([^>]*)>')
CARD = re.compile(r'<article class="cost-card" ([^>]*)>')


def attributes(tag: str) -> dict[str, str]:
    return dict(re.findall(r'data-([a-z-]+)="([^"]*)"', tag))


def test_the_pages_answer_equals_the_apis_on_shipped_data(client):
    call_command("loadreference", verbosity=0)  # the InferenceX snapshot included
    for query in (
        "model=DeepSeek-R1-0528&scenario=1k-1k&min_success_pct=0&interactivity_min=30",
        "model=DeepSeek-R1-0528&scenario=8k-1k&min_success_pct=0&spec=mtp&price_B200=9",
    ):
        html = client.get(f"/costs/?{query}").content.decode()
        panel = attributes(PANEL.search(html).group(1))
        a, b, a_usd, b_usd, ratio = (panel[k] for k in ("a", "b", "a-usd", "b-usd", "ratio"))
        api = re.search(r'id="cheaper-api" href="([^"]+)"', html).group(1).replace("&amp;", "&")
        assert api.startswith("/api/v1/compare/answer?")
        answer = client.get(api).json()
        assert (answer["a"]["sku"], answer["b"]["sku"]) == (a, b)
        assert answer["a"]["usd_per_mtok"] == float(a_usd)
        assert answer["b"]["usd_per_mtok"] == float(b_usd)
        assert answer["usd_per_mtok_ratio"] == float(ratio)
        # The page asked what it shows: its own price and filter reached the service.
        if "price_B200=9" in query:
            assert answer["own_prices"] == {"B200": 9.0}
            assert answer["facts"].startswith("precision any, speculative decoding mtp")


ROW = re.compile(r'<tr class="row-main" data-run="(\d+)" data-accelerator="([^"]+)"')


def test_cards_table_and_box_name_one_deployment_and_inferencex_rows_price_unstated(client):
    """Shipped data, so loaded once for both: /costs/'s cards, table and "which is cheaper"
    box name the same deployment for each accelerator; and a buyer's SLO at the default
    success floor prices InferenceX's rows (which state no success rate), marked."""
    call_command("loadreference", verbosity=0)
    base = "model=DeepSeek-R1-0528&a=MI355X&b=B200"
    for query in (
        f"{base}&scenario=8k-1k&precision=FP4&spec=none",
        f"{base}&scenario=8k-1k&precision=FP8",
        f"{base}&scenario=1k-1k&precision=FP4&slo=standard",
        f"{base}&scenario=8k-1k&precision=FP4&ttft_s_max=3&interactivity_min=20",
    ):
        html = client.get(f"/costs/?{query}").content.decode()
        box = attributes(PANEL.search(html).group(1))
        cards = {c["accelerator"]: c for c in map(attributes, CARD.findall(html))}
        first_rows: dict[str, str] = {}
        for run, sku in ROW.findall(html):
            first_rows.setdefault(sku, run)
        for side in ("a", "b"):
            sku = box[side]
            assert box[f"{side}-run"], (query, sku, "the box has a point")
            assert cards[sku]["run"] == box[f"{side}-run"] == first_rows[sku], (query, sku)
            assert cards[sku]["deployment"] == box[f"{side}-deployment"], (query, sku)
        ranks = [int(r) for r in re.findall(r'<td data-label="Rank">(\d+)</td>', html)]
        assert ranks == list(range(1, len(ranks) + 1)), "contiguous ranks"

    # The buyer's SLO, success floor left at the tier's (99%): InferenceX rows are priced,
    # each marked "success not stated", and the page says how many.
    html = client.get(f"/costs/?{base}&scenario=8k-1k&ttft_s_max=3&interactivity_min=20").content
    html = html.decode()
    assert "success ≥ 99%" in re.search(r'id="slo-text"[^>]*>([^<]*)<', html).group(1)
    priced = re.findall(r'<tr class="row-main"[^>]*>(.*?)</tr>', html, re.S)
    marked = [row for row in priced if 'class="flag success-unstated"' in row and "$" in row]
    assert marked, "InferenceX rows priced at the buyer's SLO, marked"
    count = re.search(r'id="unstated-count">(\d+) rows? shown', html)
    assert count and int(count.group(1)) == len(marked)
    export = client.get(f"/costs/export.json?{base}&scenario=8k-1k&ttft_s_max=3").json()
    unstated = [r for r in export["rows"] if r["success"] == "success not stated"]
    assert unstated and all(r["rank"] and r["provenance"] == "imported" for r in unstated)
