"""The run page's server-and-client timeline draws in Chromium under the site's CSP, with
its right-hand (fraction) axis: the vendored partial Plotly bundle must carry it."""

import pytest

from tests.apps.leaderboard.test_run_timeline import _timeline_document
from tests.e2e.conftest import screenshot
from tests.reviews import ingest_reviewed

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_timeline_chart_draws_both_axes_without_a_console_error(
    live_server, page, document, org
):
    run = ingest_reviewed(document=_timeline_document(document), org=org).run
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(f"{live_server.url}/runs/{run.pk}/")
    page.wait_for_selector("#chart-server-0 .main-svg", timeout=20_000)
    # One line per trace: the client's in-flight, the server's queue and its KV-cache usage.
    assert page.locator("#chart-server-0 .scatterlayer .trace").count() == 3
    assert page.locator("#chart-server-0 .y2tick").count() > 0
    screenshot(page, "run-timeline")
    assert errors == []
