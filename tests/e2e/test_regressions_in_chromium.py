"""The regressions page in Chromium: a filter swaps the table in place, and a change point's
badge on its deployment's page leads to it."""

import pytest

from apps.regressions.models import ChangePoint
from apps.regressions.services import regressions_detect
from tests.apps.regressions.series import stored_series
from tests.e2e.conftest import screenshot

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def drops() -> dict[str, ChangePoint]:
    stored_series([8000] * 6)
    stored_series([6000] * 3, first_day=6, engine_version="0.5.24")
    stored_series([5000] * 6, accelerator="H200")
    stored_series([4000] * 3, first_day=6, accelerator="H200")
    regressions_detect()
    found = ChangePoint.objects.filter(metric="tput_per_gpu").select_related(
        "deployment__accelerator"
    )
    return {cp.deployment.accelerator.sku: cp for cp in found}


def test_a_filter_swaps_the_change_points_and_the_badge_leads_to_them(live_server, page, drops):
    page.goto(f"{live_server.url}/regressions/?metric=tput_per_gpu")
    rows = page.locator("#change-points tbody tr")
    assert rows.count() == 2
    screenshot(page, "regressions")
    page.evaluate("window.__survivesSwap = 'yes'")
    with page.expect_request(lambda r: r.headers.get("hx-request") == "true"):
        page.select_option("select[name=accelerator]", "H200")
    page.wait_for_function(
        "() => document.querySelectorAll('#change-points tbody tr').length === 1"
    )
    assert page.evaluate("window.__survivesSwap") == "yes"
    assert "accelerator=H200" in page.url
    assert "H200" in rows.first.inner_text() and "MI355X" not in rows.first.inner_text()

    mi355x = drops["MI355X"]
    page.goto(f"{live_server.url}/deployments/{mi355x.deployment_id}/")
    page.click(".regression-badges")
    page.wait_for_url(f"**/regressions/?deployment={mi355x.deployment_id}*")
    page.click(f"a[href='/regressions/{mi355x.pk}/']")
    page.wait_for_url(f"**/regressions/{mi355x.pk}/")
    assert "Engine version: 0.5.23 → 0.5.24" in page.locator("#cp-changed").inner_text()
