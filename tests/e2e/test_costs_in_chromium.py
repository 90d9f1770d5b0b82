import pytest
from django.core.management import call_command

from tests.e2e.conftest import screenshot

pytestmark = pytest.mark.django_db(transaction=True)


def test_typing_a_new_price_updates_the_cost_table_without_a_reload(live_server, page):
    call_command("loadreference", no_inferencex=True, verbosity=0)
    page.goto(f"{live_server.url}/costs/")
    page.wait_for_selector("#cost-table td.mtok")
    before = page.locator("#cost-table td.mtok").first.inner_text()
    page.evaluate("window.__survivesSwap = 'yes'")

    with page.expect_response(lambda r: "price_MI355X=0.74" in r.url):
        page.fill("input[name=price_MI355X]", "0.74")
    page.wait_for_function(
        "before => document.querySelector('#cost-table td.mtok').innerText !== before", arg=before
    )
    assert page.evaluate("window.__survivesSwap") == "yes"
    assert "price_MI355X=0.74" in page.url  # the whole state is shareable
    screenshot(page, "costs")
