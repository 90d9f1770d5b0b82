"""The default views in Chromium at 390 and 1440 px, on the shipped data (issue 52): the board
states its SLO tier and what its throughput column means, its SLO controls change both, and
the answer lists the measurement dates with the gap between them among what differs."""

import pytest
from django.core.management import call_command

from tests.e2e.conftest import screenshot

pytestmark = pytest.mark.django_db(transaction=True)


def _within(page, selector: str, width: int) -> None:
    """The element is shown, and inside the viewport's width (not cut off at 390 px)."""
    element = page.locator(selector).first
    assert element.is_visible(), selector
    box = element.bounding_box()
    assert box is not None and box["x"] >= 0 and box["width"] <= width, (selector, box)


def test_the_board_states_its_tier_and_column_and_the_answer_its_date_gap(live_server, page):
    call_command("loadreference", verbosity=0)
    for width in (390, 1440):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(live_server.url + "/")
        slo = page.locator("#slo-text")
        assert slo.get_attribute("data-tier") == "interactive"
        assert slo.inner_text().startswith("interactive tier: TTFT p99 ≤")
        meaning = page.locator("#column-meaning").inner_text()
        assert "tok/s/GPU at SLO" in meaning and "meeting every bound of this SLO" in meaning
        header = page.locator("#leaderboard thead th").nth(2).inner_text()
        assert "tok/s/GPU at SLO" in header
        if page.locator("#filters-fold").get_attribute("open") is None:
            page.click("#filters-fold summary")  # a phone's first screen folds the filters
        for selector in ("#slo-text", "#column-meaning", "#slo-controls select[name=slo]"):
            _within(page, selector, width)
        screenshot(page, f"defaults-board-{width}")

        # The board's own SLO control: throughput-only bounds no latency, and the column says so.
        page.select_option("#board-filters select[name=slo]", "throughput")
        page.wait_for_url("**slo=throughput**")
        page.wait_for_function("document.querySelector('#slo-text').dataset.tier === 'throughput'")
        assert page.locator("#slo-text").inner_text() == "throughput-only tier: bounds no latency"
        assert "bounds no latency" in page.locator("#column-meaning").inner_text()
        header = page.locator("#leaderboard thead th").nth(2).inner_text()
        assert "at SLO" not in header and "no latency bound" in header

        # The answer at its default: what still differs begins with the dates and their gap.
        page.goto(live_server.url + "/answer/")
        assert page.locator("#answer-slo").get_attribute("data-tier") == "interactive"
        differs = page.locator("#answer-differs li").all_inner_texts()
        assert differs and differs[0].startswith("measured: "), differs
        assert differs[0].endswith("days apart)") or differs[0].endswith("day apart)"), differs
        _within(page, "#answer-differs li", width)
        screenshot(page, f"defaults-answer-{width}")
