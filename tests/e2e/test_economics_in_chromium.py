"""The economics pages on the shipped data in Chromium, on a phone (390 px) and a laptop
(1440 px): margin, fleet and first-token draw their charts and tables, and none scrolls
sideways (a table too wide scrolls inside its own box, never the page)."""

import pytest
from django.core.management import call_command

from tests.e2e.conftest import screenshot
from tests.e2e.test_dashboard_in_chromium import VIEWPORTS, open_page, too_wide

pytestmark = pytest.mark.django_db(transaction=True)

# A bar or a marker Plotly drew.
DRAWN = "[data-figure] .main-svg .bars path, [data-figure] .main-svg .scatterlayer .point"
PAGES = {
    "/economics/margin/": "#margin-table tbody tr[data-sku]",
    "/economics/fleet/": "#fleet-table tbody tr[data-sku]",
    "/economics/first-token/": "section.cap",
}


def test_margin_fleet_and_first_token_draw_charts_and_tables_without_sideways_scroll(
    live_server, browser
):
    call_command("loadreference", verbosity=0)
    wide = []
    for viewport in VIEWPORTS:
        context, page = open_page(browser, viewport)
        for path, rows in PAGES.items():
            page.goto(live_server.url + path, wait_until="load")
            page.wait_for_selector("[data-figure] .main-svg")
            assert page.locator(DRAWN).count() > 0, path
            assert page.locator(rows).count() >= 2, path
            assert "all deployed GPUs" in page.locator("#econ-stated").inner_text()
            screenshot(page, f"economics-{viewport['width']}-{path.strip('/').replace('/', '-')}")
            wide += too_wide(page, path, viewport)
        context.close()
    assert not wide, "\n".join(wide)
