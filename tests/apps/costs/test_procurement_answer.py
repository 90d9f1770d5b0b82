"""/costs/'s "which is cheaper at this SLO" is the one answer service's: on the shipped
reference data its figures are those GET /api/v1/compare/answer gives for the same question."""

import re

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db
PANEL = re.compile(
    r'id="cheaper-at-slo" class="cost-card" data-a="([^"]+)" data-b="([^"]+)" '
    r'data-a-usd="([^"]*)" data-b-usd="([^"]*)" data-ratio="([^"]*)"'
)


def test_the_pages_answer_equals_the_apis_on_shipped_data(client):
    call_command("loadreference", verbosity=0)  # the InferenceX snapshot included
    for query in (
        "model=DeepSeek-R1-0528&scenario=1k-1k&min_success_pct=0&interactivity_min=30",
        "model=DeepSeek-R1-0528&scenario=8k-1k&min_success_pct=0&spec=mtp&price_B200=9",
    ):
        html = client.get(f"/costs/?{query}").content.decode()
        a, b, a_usd, b_usd, ratio = PANEL.search(html).groups()
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
