"""Every page, read the way people read it: at phone and desktop sizes, through axe-core,
with a mouse on the charts and with the filter, compare and pairing flows clicked through."""

from pathlib import Path

import pytest
from django.core.management import call_command

from apps.runs.services import run_ingest
from tests.e2e.conftest import screenshot
from tests.factories import document, point

pytestmark = pytest.mark.django_db(transaction=True)

AXE = Path(__file__).parent / "node_modules" / "axe-core" / "axe.min.js"
VIEWPORTS = [{"width": 390, "height": 844}, {"width": 1440, "height": 900}]
# A sha256 with no break opportunity: long hashes must wrap, not widen the page.
LONG_HASH = "f" * 64


def gsm8k(pattern: list[bool]) -> dict:
    """40 items with per-item outcomes, so two results can be paired item by item."""
    items = [{"item_id": f"q{q}", "correct": pattern[q % len(pattern)]} for q in range(40)]
    correct = sum(item["correct"] for item in items)
    return {
        "protocol": "gsm8k-5shot-v1",
        "task": "gsm8k",
        "metric": "exact_match_numeric",
        "protocol_hash": "h1",
        "n": len(items),
        "correct": correct,
        "score": correct / len(items),
        "items": items,
    }


@pytest.fixture
def seeded(org):
    call_command("loadreference", no_inferencex=True, verbosity=0)
    levels = [
        point(1, output_tok_s=150, ttft_p99_ms=600, interactivity=150),
        point(16, output_tok_s=1100, ttft_p99_ms=1900, interactivity=70),
    ]
    runs = {
        "sglang": run_ingest(
            document=document(accuracy=[gsm8k([True] * 9 + [False])], points=levels),
            org=org,
        ).run,
        "vllm": run_ingest(
            document=document(
                engine="vllm",
                quantization="BF16",
                accuracy=[gsm8k([True] * 7 + [False])],
                points=[
                    point(1, output_tok_s=120, ttft_p99_ms=500, interactivity=140),
                    point(16, output_tok_s=900, ttft_p99_ms=1700, interactivity=60),
                ],
            ),
            org=org,
        ).run,
        "b200": run_ingest(
            # Its own item-level result (a quantized run ranks only with one, and the
            # factories' default states no items, so it could not be paired on the page).
            document=document(
                accelerator="B200",
                quantization="FP8",
                accuracy=[gsm8k([True] * 8 + [False] * 2)],
                points=levels,
            ),
            org=org,
        ).run,
    }
    deployment = runs["sglang"].deployment
    deployment.fingerprint = LONG_HASH
    deployment.save(update_fields=["fingerprint"])
    return runs


def every_page(runs) -> list[str]:
    a, b = runs["sglang"].deployment_id, runs["vllm"].deployment_id
    result_a = runs["sglang"].accuracy_results.first().pk
    result_b = runs["vllm"].accuracy_results.first().pk
    return [
        "/?scenario=seed-20k-1k-60",
        "/runs/",
        f"/runs/{runs['sglang'].pk}/",
        f"/deployments/{a}/",
        f"/compare/?d={a}&d={b}",
        "/compare/",
        "/costs/",
        "/costs/claim/",
        "/accuracy/",
        f"/accuracy/compare/?a={result_a}&b={result_b}",
        "/story/glm-5-2/",
        "/methodology/",
        "/api/v1/docs",
        "/no-such-page/",
        "/accounts/login/",
        "/accounts/signup/",
        "/accounts/password/reset/",
        "/embed/board/?scenario=seed-20k-1k-60",
        f"/embed/compare/?d={a}&d={b}",
    ]


def open_page(browser, viewport):
    context = browser.new_context(viewport=viewport)
    return context, context.new_page()


def open_settled(page, url: str) -> None:
    """Opens a page and waits until what scripts draw is drawn: the charts' SVG, and on the
    API docs Swagger's operations, which it renders only after it has fetched and parsed the
    OpenAPI document (its error box, if any, appears in that same render)."""
    page.goto(url, wait_until="load")
    if page.locator("[data-figure]").count():
        page.wait_for_selector("[data-figure] .main-svg")
    if "/api/v1/docs" in url:
        page.wait_for_selector("#swagger-ui .opblock")


def test_the_api_docs_render_every_operation_without_a_parser_error(live_server, browser):
    context, page = open_page(browser, VIEWPORTS[1])
    open_settled(page, live_server.url + "/api/v1/docs")
    errors = page.locator("#swagger-ui .errors-wrapper").all_inner_texts()
    assert errors == []
    assert page.locator("#swagger-ui .opblock").count() > 20
    context.close()


def test_no_page_scrolls_sideways_on_a_phone_or_a_laptop(live_server, browser, seeded):
    wide = []
    for viewport in VIEWPORTS:
        context, page = open_page(browser, viewport)
        for path in every_page(seeded):
            open_settled(page, live_server.url + path)
            width = page.evaluate("document.scrollingElement.scrollWidth")
            name = path.strip("/").split("?")[0].replace("/", "-") or "leaderboard"
            screenshot(page, f"{viewport['width']}-{name}")
            if width > viewport["width"]:
                # Name the widest culprits so a failure says what to fix.
                culprits = page.evaluate(
                    """w => [...document.querySelectorAll("body *")]
                        .filter(e => e.getBoundingClientRect().right > w)
                        .filter(e => { for (let a = e.parentElement; a; a = a.parentElement)
                            if (getComputedStyle(a).overflowX !== "visible") return false;
                            return true; })
                        .slice(0, 4).map(e => e.tagName + "." + e.className + "#" + e.id)""",
                    viewport["width"],
                )
                wide.append(f"{path} at {viewport['width']}px is {width}px wide: {culprits}")
        context.close()
    assert not wide, "\n".join(wide)


def test_axe_finds_no_serious_or_critical_violation_on_any_page(live_server, browser, seeded):
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: scripts/test runs `npm ci --prefix tests/e2e`")
    found = []
    axe_source = AXE.read_text()
    for viewport in VIEWPORTS:
        context, page = open_page(browser, viewport)
        for path in every_page(seeded):
            open_settled(page, live_server.url + path)
            # Evaluated rather than added as a <script>: the site's CSP refuses inline scripts,
            # and the check must run on the page as visitors get it, CSP included.
            page.evaluate(axe_source)
            violations = page.evaluate(
                """async () => (await axe.run(document, {runOnly: {type: "tag", values:
                    ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]}}))
                    .violations.filter(v => v.impact === "serious" || v.impact === "critical")
                    .map(v => v.id + ": " + v.nodes.slice(0, 3).map(n => n.target.join(" ")))"""
            )
            found += [f"{path} @{viewport['width']}: {v}" for v in violations]
        context.close()
    assert not found, "\n".join(found)


def test_hovering_a_chart_point_names_the_metric_and_its_unit(live_server, browser, seeded):
    context, page = open_page(browser, VIEWPORTS[1])
    page.goto(f"{live_server.url}/?scenario=seed-20k-1k-60")
    page.wait_for_selector("#chart-interactivity .scatterlayer .point")
    page.locator("#chart-interactivity .scatterlayer .point").first.hover(force=True)
    hover = page.locator("#chart-interactivity .hoverlayer .hovertext")
    hover.first.wait_for()
    text = hover.first.text_content()
    assert "Interactivity (tok/s/user, p50)" in text
    assert "Throughput per GPU (output tok/s)" in text
    context.close()


def test_series_filters_and_sorting_work_from_the_controls(live_server, browser, seeded):
    context, page = open_page(browser, VIEWPORTS[1])
    page.goto(f"{live_server.url}/?scenario=seed-20k-1k-60")
    page.wait_for_selector("#chart-interactivity .main-svg")
    with page.expect_request(lambda r: r.headers.get("hx-request") == "true"):
        page.select_option("select[name=series]", "engine")
    page.wait_for_url("**series=engine**")
    page.wait_for_selector("#chart-interactivity .legendtext")
    legend = page.locator("#chart-interactivity .legendtext").evaluate_all(
        "nodes => nodes.map(n => n.textContent)"
    )
    assert sorted(legend) == ["sglang", "vllm"]
    # Several engines at once, from the checkboxes; the choice lands in the address.
    page.click("summary:has-text('Engines')")
    with page.expect_request(lambda r: r.headers.get("hx-request") == "true"):
        page.get_by_role("checkbox", name="vllm", exact=True).check()
    page.wait_for_url("**engine=vllm**")
    page.wait_for_function(
        """() => [...document.querySelectorAll('#leaderboard tbody td:nth-child(2)')]
            .every(td => td.textContent.includes('vllm'))"""
    )
    # Sorting keeps the filters and says which column is sorted.
    page.click("th a:has-text('$/Mtok out')")
    page.wait_for_url("**sort=cost**")
    assert "series=engine" in page.url and "engine=vllm" in page.url
    sorted_header = page.locator("th[aria-sort]")
    assert sorted_header.count() == 1 and "$/Mtok" in sorted_header.inner_text()
    context.close()


def test_back_from_compare_to_a_filtered_board_shows_the_whole_page(live_server, browser, seeded):
    context, page = open_page(browser, VIEWPORTS[1])
    page.goto(f"{live_server.url}/?scenario=seed-20k-1k-60&tier=rental_3yr")
    # A filter swaps the board in place and pushes its address (the partial's URL).
    with page.expect_request(lambda r: r.headers.get("hx-request") == "true"):
        page.select_option("select[name=series]", "engine")
    page.wait_for_url("**series=engine**")
    page.locator("input[name=d]").nth(0).check()
    page.locator("input[name=d]").nth(1).check()
    page.click("button:has-text('Compare selected')")
    page.wait_for_url("**/compare/**")
    # The comparison keeps the board's price tier and scenario.
    assert "tier=rental_3yr" in page.url and "scenario=seed-20k-1k-60" in page.url
    assert page.locator("select[name=tier]").input_value() == "rental_3yr"
    page.go_back(wait_until="load")
    assert "series=engine" in page.url
    # The whole page, styled, with its filters: not the board fragment alone.
    assert page.locator("h1").inner_text() == "Leaderboard"
    assert page.locator("link[rel=stylesheet]").count() > 0
    assert page.locator("#board-filters select[name=series]").input_value() == "engine"
    context.close()


def test_compare_is_picked_added_to_and_trimmed_without_editing_the_address(
    live_server, browser, seeded
):
    context, page = open_page(browser, VIEWPORTS[0])
    page.goto(f"{live_server.url}/?scenario=seed-20k-1k-60")
    # Nothing ticked: the page says what to do and stays.
    page.click("button:has-text('Compare selected')")
    assert "Tick 2 to 4 deployments" in page.locator(".compare-status").inner_text()
    assert "/compare/" not in page.url
    sglang = seeded["sglang"].deployment
    page.get_by_role("checkbox", name=f"Compare {sglang.gpus}×MI355X").first.check()
    page.locator("input[name=d]").nth(1).check()
    page.click("button:has-text('Compare selected')")
    page.wait_for_url("**/compare/**")
    columns = page.locator("#comparison thead th").count() - 1
    assert columns == 2
    # Add the third deployment from the page itself, then remove one.
    page.select_option("#add-deployment", index=1)
    page.click("#compare-picker button:has-text('Add')")
    page.wait_for_selector("#comparison")
    assert page.locator("#comparison thead th").count() - 1 == 3
    # The chart's lines carry the column names.
    page.wait_for_selector("#chart-compare .legendtext")
    headers = page.locator("#comparison thead th a:not(.small)").all_inner_texts()
    legend = page.locator("#chart-compare .legendtext").evaluate_all(
        "nodes => nodes.map(n => n.textContent)"
    )
    assert set(legend) <= set(headers) and legend
    page.locator("#comparison thead a.small").first.click()
    page.wait_for_selector("#comparison")
    assert page.locator("#comparison thead th").count() - 1 == 2
    context.close()


def test_accuracy_results_are_paired_from_the_page(live_server, browser, seeded):
    context, page = open_page(browser, VIEWPORTS[1])
    page.goto(f"{live_server.url}/accuracy/")
    page.get_by_role("radio", name="Baseline (A)").first.check()
    page.get_by_role("radio", name="Candidate (B)").nth(1).check()
    page.click("button:has-text('Compare A and B (paired)')")
    page.wait_for_url("**/accuracy/compare/**")
    assert page.locator("h1").inner_text() == "Paired accuracy comparison"
    assert page.locator(".error").count() == 0, page.locator(".error").inner_text()
    context.close()


def test_an_unknown_filter_value_is_explained_on_the_page(live_server, browser, seeded):
    context, page = open_page(browser, VIEWPORTS[1])
    page.goto(f"{live_server.url}/?scenario=seed-20k-1k-60&tier=nope")
    notice = page.get_by_role("alert")
    assert "Price tier" in notice.inner_text() and "nope" in notice.inner_text()
    context.close()
