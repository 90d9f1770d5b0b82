"""/answer/ and /compare/ take own prices (`price_<SKU>`) and price profiles as /costs/ does:
a field per side, the organization's active profile under the link's prices, a permalink's
prices alone, and the page saying which priced it (issue 52)."""

import pytest

from apps.costs.services import price_profile_save
from tests.factories import document, point
from tests.reviews import ingest_reviewed

pytestmark = pytest.mark.django_db

QUESTION = {"model": "GLM 5.2", "scenario": "8k-1k", "a": "MI355X", "b": "B200", "precision": "any"}


@pytest.fixture
def runs(org):
    made = {}
    for sku in ("MI355X", "B200"):
        points = [point(16, output_tok_s=2400, ttft_p99_ms=2000, interactivity=40)]  # 300/GPU
        doc = document(accelerator=sku, preset="8k-1k", points=points)
        made[sku] = ingest_reviewed(document=doc, org=org, is_public=True).run
    return made


def usd(per_gpu_hour: float) -> str:
    """$/Mtok at 300 output tok/s/GPU, as the pages print it."""
    return f"${per_gpu_hour / (300 * 3600 / 1e6):.3f}"


def test_the_answer_takes_own_prices_and_a_profile_and_says_which_priced_it(
    client, org, person, runs
):
    page = client.get("/answer/", {**QUESTION, "price_B200": "9"}).content.decode()
    assert 'name="price_MI355X"' in page and 'name="price_B200" value="9"' in page
    assert usd(9) in page
    assert "prices in the link (B200 $9/GPU-hr)" in page
    # A member's active profile prices the page too; the link's price wins over it.
    member = person(org)
    price_profile_save(org=org, user=member, name="Acme", usd_per_gpu_hour={"MI355X": 2.5})
    client.force_login(member)
    page = client.get("/answer/", {**QUESTION, "price_B200": "9"}).content.decode()
    assert "profile “Acme”" in page and usd(2.5) in page and usd(9) in page
    # A permalink's prices stand alone, as /costs/'s do.
    linked = {**QUESTION, "price_B200": "9", "prices_from": "link"}
    page = client.get("/answer/", linked).content.decode()
    assert "profile “Acme”" not in page and usd(2.5) not in page
    body = client.get("/api/v1/compare/answer", linked).json()
    assert body["own_prices"] == {"B200": 9.0} and body["price_profile"] is None


def test_compare_takes_own_prices_and_says_which_priced_it(client, runs):
    ids = [runs["B200"].deployment_id, runs["MI355X"].deployment_id]
    page = client.get("/compare/", {"d": ids, "price_MI355X": "3"}).content.decode()
    assert 'name="price_MI355X" value="3"' in page and 'name="price_B200"' in page
    assert "prices in the link (MI355X $3/GPU-hr)" in page
    rows = client.get("/compare/", {"d": ids, "price_MI355X": "3", "format": "json"}).json()
    assert rows[1]["answer_usd_per_mtok"] == pytest.approx(3 / (300 * 3600 / 1e6))
