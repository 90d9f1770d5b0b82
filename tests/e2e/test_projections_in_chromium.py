"""GLM 5.2 on B200, projected: in Chromium the story draws it dashed with its band and the
'projected' label; the board draws it only when asked, and never as a row."""

import pytest
from django.core.management import call_command

from tests.e2e.conftest import screenshot

pytestmark = pytest.mark.django_db(transaction=True)

DASHED = "nodes => nodes.filter(n => (n.style.strokeDasharray || 'none') !== 'none').length"


def _legend(page, chart: str) -> list[str]:
    return page.locator(f"{chart} .legendtext").evaluate_all(
        "nodes => nodes.map(n => n.textContent)"
    )


def test_the_story_draws_b200_projected_dashed_with_its_band(live_server, page):
    call_command("loadreference", no_inferencex=True, verbosity=0)
    page.goto(live_server.url + "/story/glm-5-2/#b200-projected")
    page.wait_for_selector("#chart-projection .main-svg .scatterlayer .js-line")
    screenshot(page, "story-b200-projected")
    assert page.locator("#projection .badge-projected").inner_text() == "projected"
    assert any("B200" in t and "projected" in t for t in _legend(page, "#chart-projection"))
    lines = page.locator("#chart-projection .scatterlayer .js-line")
    assert lines.evaluate_all(DASHED) >= 1
    assert page.locator("#chart-projection .scatterlayer .js-fill").count() >= 1


def test_the_board_draws_the_projection_only_when_asked(live_server, page):
    call_command("loadreference", no_inferencex=True, verbosity=0)
    view = live_server.url + "/?model=GLM+5.2&scenario=seed-20k-1k-60"
    page.goto(view)
    assert page.locator("#chart-interactivity .js-line").count() == 0
    # ticking the box re-renders the board in place (HTMX) and puts it in the URL
    page.locator("input[name=projected]").check()
    page.wait_for_url("**projected=1**")
    page.wait_for_selector("#chart-interactivity .main-svg .scatterlayer .js-line")
    screenshot(page, "board-b200-projected")
    assert any("projected" in t for t in _legend(page, "#chart-interactivity"))
    assert page.locator("#chart-interactivity .scatterlayer .js-line").evaluate_all(DASHED) >= 1
    assert page.locator("#chart-interactivity .scatterlayer .js-fill").count() >= 1
    note = page.locator("#projected-note").inner_text()
    assert "never ranked" in note and "fell inside their band" in note
    assert "B200" not in page.locator("#board table").first.inner_text()
