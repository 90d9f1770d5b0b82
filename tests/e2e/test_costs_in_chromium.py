import pytest
from django.core.management import call_command

from tests.e2e.conftest import SCREENSHOTS, screenshot

pytestmark = pytest.mark.django_db(transaction=True)


def test_typing_a_new_price_updates_the_cost_table_without_a_reload(live_server, page):
    call_command("loadreference", no_inferencex=True, verbosity=0)
    # The published figures state no TTFT p99, which the default tier bounds: the
    # throughput-only tier prices them.
    page.goto(f"{live_server.url}/costs/?slo=throughput")
    page.wait_for_selector("#cost-table td.mtok")
    # The first MI355X row's $/Mtok: the price typed is MI355X's, and the table's first row
    # may be another accelerator's.
    mi355x_mtok = """() => [...document.querySelectorAll('#cost-table tr.row-main')]
        .find(row => row.innerText.includes('MI355X')).querySelector('td.mtok').innerText"""
    before = page.evaluate(mi355x_mtok)
    page.evaluate("window.__survivesSwap = 'yes'")

    with page.expect_response(lambda r: "price_MI355X=0.74" in r.url):
        page.fill("input[name=price_MI355X]", "0.74")
    page.wait_for_function(f"before => ({mi355x_mtok})() !== before", arg=before)
    assert page.evaluate("window.__survivesSwap") == "yes"
    assert "price_MI355X=0.74" in page.url  # the whole state is shareable
    screenshot(page, "costs")


def test_a_claims_verdict_downloads_as_a_1200_by_630_png(live_server, page):
    call_command("loadreference", no_inferencex=True, verbosity=0)
    page.goto(f"{live_server.url}/costs/claim/?price_a=0.70")
    with page.expect_download() as download:
        page.click("#claim-share .claim-png")
    assert download.value.suggested_filename == "claim-verdict.png"
    with open(download.value.path(), "rb") as image:
        head = image.read(24)
    assert head.startswith(b"\x89PNG\r\n\x1a\n")
    # The IHDR chunk: width and height, 4 bytes each, big-endian.
    assert int.from_bytes(head[16:20], "big") == 1200
    assert int.from_bytes(head[20:24], "big") == 630
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    download.value.save_as(SCREENSHOTS / "claim-verdict-card.png")


def test_picking_another_model_refreshes_the_engine_and_spec_lists(live_server, page):
    from apps.runs.services import run_ingest
    from tests.factories import document

    for engine in ("sglang", "vllm"):
        run_ingest(document=document(engine=engine), org=None)
    run_ingest(document=document(model="Tiny", engine="vllm"), org=None)
    page.goto(f"{live_server.url}/costs/?model=GLM 5.2")
    engines = "() => [...document.querySelectorAll('#engine-filter option')].map(o => o.text)"
    assert page.evaluate(engines) == ["— any —", "sglang", "vllm"]
    with page.expect_response(lambda r: "model=Tiny" in r.url):
        page.select_option("select[name=model]", "Tiny")
    page.wait_for_function(f"() => ({engines})().join() === '— any —,vllm'")
    # The refreshed list still drives the form: picking from it asks for its rows.
    with page.expect_response(lambda r: "engine=vllm" in r.url):
        page.select_option("#engine-filter", "vllm")
    page.wait_for_url("**engine=vllm**")  # htmx pushes the URL after its swap
