"""In Chromium: /compare/ states a difference with its interval, and the board's overlay
shows labelled unofficial runs beside the official rows, hollow on the charts."""

import pytest

from apps.runs.services import run_ingest
from tests.apps.leaderboard.test_compare_significance import measured
from tests.e2e.conftest import screenshot

pytestmark = pytest.mark.django_db(transaction=True)

OVERLAY = "unofficial (labelled, not ranked)"


def test_the_board_overlays_unofficial_runs_and_compare_states_the_interval(live_server, page):
    fast = run_ingest(document=measured("MI355X", e2el_ms=100, seed=1), org=None).run
    slow = run_ingest(document=measured("B200", e2el_ms=125, seed=2), org=None).run
    trial = measured("MI355X", e2el_ms=80, seed=3)
    trial["labels"] = {"unofficial": "true", "branch": "faster-kv", "pr": "42"}
    trial_run = run_ingest(document=trial, org=None).run

    page.goto(f"{live_server.url}/")
    assert page.locator("#leaderboard tbody tr").count() == 2
    assert page.locator("#unofficial-runs").count() == 0
    with page.expect_request(lambda r: r.headers.get("hx-request") == "true"):
        page.check("input[name=unofficial]")
    page.wait_for_selector("#unofficial-runs .unofficial-row")
    assert "unofficial=1" in page.url
    row = page.locator("#unofficial-runs .unofficial-row").inner_text()
    assert "branch=faster-kv, pr=42" in row
    assert page.locator("#leaderboard tbody tr").count() == 2  # still not ranked
    page.wait_for_selector("#chart-interactivity .main-svg", timeout=20_000)
    overlay = page.evaluate(
        """name => (document.getElementById('chart-interactivity').data || [])
             .filter(t => t.name === name).map(t => [t.marker.symbol, t.customdata])""",
        OVERLAY,
    )
    assert overlay == [["diamond-open", [f"/runs/{trial_run.pk}/"]]]
    screenshot(page, "board-unofficial-overlay")

    page.goto(f"{live_server.url}/compare/?d={fast.deployment_id}&d={slow.deployment_id}")
    cell = page.locator(".significance-cell").nth(1).inner_text()
    assert "This column's output tok/s/GPU is 20% lower [" in cell
    screenshot(page, "compare-significance")
