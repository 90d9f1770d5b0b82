"""Every page, read the way people read it: at phone and desktop sizes, through axe-core,
with a mouse on the charts and with the filter, compare and pairing flows clicked through."""

import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
import redis
from django.contrib.auth.models import Permission
from django.core.management import call_command
from django.test import Client

from apps.catalog.models import Scenario
from apps.costs.services import price_profile_save, saved_page_save
from apps.jobs.services import endpoint_create, job_enqueue, pools_first_party_ensure
from apps.regressions.models import ChangePoint, Subscription
from apps.regressions.services import regressions_detect
from apps.trust.services import review_propose
from tests.apps.regressions.series import stored_series
from tests.e2e.conftest import screenshot
from tests.factories import document, point
from tests.reviews import ingest_reviewed

pytestmark = pytest.mark.django_db(transaction=True)

AXE = Path(__file__).parent / "node_modules" / "axe-core" / "axe.min.js"
VIEWPORTS = [{"width": 390, "height": 844}, {"width": 1440, "height": 900}]
# A pool of this module's own on the suite's Redis (DB 7, the jobs tests' broker database).
POOL = f"pool.e2e{uuid.uuid4().hex[:8]}"
WEBHOOK = "https://hooks.example.com/inferboard/ops-team/regressions/" + "x" * 60
# A sha256 with no break opportunity: long hashes must wrap, not widen the page.
LONG_HASH = "f" * 64


def broker_url(settings) -> str:
    base = urlsplit(settings.REDIS_URL or "redis://127.0.0.1:6379/0")
    return urlunsplit((base.scheme, base.netloc, "/7", "", ""))


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
        "sglang": ingest_reviewed(
            document=document(accuracy=[gsm8k([True] * 9 + [False])], points=levels),
            org=org,
        ).run,
        "vllm": ingest_reviewed(
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
        "b200": ingest_reviewed(
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


def open_page(browser, viewport, color_scheme: str = "light"):
    context = browser.new_context(viewport=viewport, color_scheme=color_scheme)
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


def too_wide(page, path: str, viewport: dict) -> list[str]:
    """The page at `path` if it scrolls sideways, naming its widest culprits (what to fix)."""
    width = page.evaluate("document.scrollingElement.scrollWidth")
    if width <= viewport["width"]:
        return []
    culprits = page.evaluate(
        """w => [...document.querySelectorAll("body *")]
            .filter(e => e.getBoundingClientRect().right > w)
            .filter(e => { for (let a = e.parentElement; a; a = a.parentElement)
                if (getComputedStyle(a).overflowX !== "visible") return false;
                return true; })
            .slice(0, 4).map(e => e.tagName + "." + e.className + "#" + e.id)""",
        viewport["width"],
    )
    return [f"{path} at {viewport['width']}px is {width}px wide: {culprits}"]


def axe_violations(page, path: str, viewport: dict) -> list[str]:
    """Serious and critical axe findings on the open page."""
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: scripts/test runs `npm ci --prefix tests/e2e`")
    # Evaluated rather than added as a <script>: the site's CSP refuses inline scripts,
    # and the check must run on the page as visitors get it, CSP included.
    page.evaluate(AXE.read_text())
    violations = page.evaluate(
        """async () => (await axe.run(document, {runOnly: {type: "tag", values:
            ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]}}))
            .violations.filter(v => v.impact === "serious" || v.impact === "critical")
            .map(v => v.id + ": " + v.nodes.slice(0, 3).map(n => n.target.join(" ")))"""
    )
    return [f"{path} @{viewport['width']}: {v}" for v in violations]


def walk(
    browser, base: str, paths: list[str], check, *, prefix="", cookies=(), scheme="light"
) -> list:
    """Opens every path at both sizes (signed in when given a session cookie, in the light
    or dark colour scheme), screenshots it, and gathers what `check` finds."""
    found = []
    for viewport in VIEWPORTS:
        context, page = open_page(browser, viewport, scheme)
        context.add_cookies(list(cookies))
        for path in paths:
            open_settled(page, base + path)
            name = path.strip("/").split("?")[0].replace("/", "-") or "leaderboard"
            screenshot(page, f"{prefix}{viewport['width']}-{name}")
            found += check(page, path, viewport)
        context.close()
    return found


def test_no_page_scrolls_sideways_on_a_phone_or_a_laptop(live_server, browser, seeded):
    wide = walk(browser, live_server.url, every_page(seeded), too_wide)
    assert not wide, "\n".join(wide)


def test_axe_finds_no_serious_or_critical_violation_on_any_page(live_server, browser, seeded):
    found = walk(browser, live_server.url, every_page(seeded), axe_violations)
    assert not found, "\n".join(found)


def test_the_dark_theme_follows_the_system_and_passes_axe(live_server, browser, seeded):
    found = walk(
        browser, live_server.url, every_page(seeded), axe_violations, prefix="dark-", scheme="dark"
    )
    assert not found, "\n".join(found)
    context, page = open_page(browser, VIEWPORTS[1], "dark")
    page.goto(live_server.url + "/methodology/")
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(18, 21, 27)"
    context.close()


@pytest.fixture
def signed_in(seeded, org, person, settings, live_server):
    """An admin of the seeded runs' organization who is also a reviewer, with what each
    signed-in page lists: an endpoint and its job, a proposed review, change points, an
    alert subscription. Returns the session cookie and the pages."""
    settings.CELERY_BROKER_URL = broker_url(settings)
    pools_first_party_ensure([POOL])
    user = person(org, "admin", email="admin@example.com")
    user.user_permissions.add(Permission.objects.get(codename="review_runs"))
    endpoint = endpoint_create(
        org=org,
        name="h200-vllm",
        url="http://127.0.0.1:9/",
        deployment=seeded["vllm"].deployment,
        pool=POOL,
    )
    job = job_enqueue(endpoint=endpoint, scenario=Scenario.objects.first())
    review_propose(run=seeded["sglang"], actor="admin@example.com")
    stored_series([8000] * 6)
    stored_series([6000] * 3, first_day=6, engine_version="0.5.24")
    regressions_detect()
    Subscription.objects.create(org=org, name="ops", channel="webhook", target=WEBHOOK)
    change_point = ChangePoint.objects.first()
    saved = saved_page_save(
        org=org, user=user, name="GLM at our prices", kind="comparison", query="price_MI355X=1.2"
    )
    price_profile_save(org=org, user=user, name="list prices", usd_per_gpu_hour={"MI355X": 1.2})
    client = Client()
    client.force_login(user)
    cookie = {
        "name": settings.SESSION_COOKIE_NAME,
        "value": client.cookies[settings.SESSION_COOKIE_NAME].value,
        "url": live_server.url,
    }
    pages = [
        "/?scenario=seed-20k-1k-60",
        f"/runs/{seeded['sglang'].pk}/",
        "/org/",
        "/endpoints/",
        f"/jobs/{job.pk}/",
        "/costs/",
        "/staff/reviews/",
        "/regressions/",
        f"/regressions/{change_point.pk}/",
        "/regressions/subscriptions/",
        f"/costs/s/{saved.slug}/",
        "/accounts/email/",
        "/accounts/password/change/",
    ]
    yield cookie, pages
    redis.Redis.from_url(settings.CELERY_BROKER_URL).delete(POOL)


def test_no_signed_in_page_scrolls_sideways(live_server, browser, signed_in):
    cookie, pages = signed_in
    wide = walk(browser, live_server.url, pages, too_wide, prefix="signed-in-", cookies=[cookie])
    assert not wide, "\n".join(wide)


def test_axe_finds_no_serious_or_critical_violation_signed_in(live_server, browser, signed_in):
    cookie, pages = signed_in
    found = walk(browser, live_server.url, pages, axe_violations, cookies=[cookie])
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


def scrolls_inside(page, path: str, viewport: dict, tables: str = "table") -> list[str]:
    """Tables that scroll sideways inside a box of their own (the page itself may not): a
    reader must scroll each to see its last column, which the page-wide check does not catch."""
    boxes = page.evaluate(
        """selector => [...document.querySelectorAll(selector)].flatMap(t => {
            for (let box = t; box && box !== document.body; box = box.parentElement) {
                const scrolls = ["auto", "scroll"].includes(getComputedStyle(box).overflowX);
                if (scrolls && box.scrollWidth > box.clientWidth + 1)
                    return [[t.id || t.className, box.scrollWidth, box.clientWidth]];
            }
            return [];
        })""",
        tables,
    )
    return [f"{path} at {viewport['width']}px: table {n} is {w}px in {c}px" for n, w, c in boxes]


def test_operator_and_story_pages_fit_and_pass_axe(live_server, browser, signed_in, org, person):
    """The review queue as someone who does not review (the site's 403 page), the regressions
    table at 1440 px and the story's table at 390 px: no sideways scroll, of the page or of
    the table in its box, and no serious axe finding (issue 42)."""
    cookie, _ = signed_in
    client = Client()
    client.force_login(person(org, "member", email="member@example.com"))
    outsider = {**cookie, "value": client.cookies[settings_cookie()].value}
    found = []
    for viewport, cookies, path, tables in [
        (VIEWPORTS[0], [outsider], "/staff/reviews/", "table"),
        (VIEWPORTS[1], [outsider], "/staff/reviews/", "table"),
        (VIEWPORTS[1], [cookie], "/regressions/", "#change-points"),
        # The story's claim table; its evidence tables still scroll in their own box.
        (VIEWPORTS[0], [], "/story/glm-5-2/", "#claim"),
    ]:
        context, page = open_page(browser, viewport)
        context.add_cookies(cookies)
        response = page.goto(live_server.url + path)
        if path == "/staff/reviews/":
            assert response.status == 403 and page.locator("h1").inner_text() == "Not allowed"
        screenshot(page, f"issue42-{viewport['width']}-{path.strip('/').replace('/', '-')}")
        found += too_wide(page, path, viewport) + axe_violations(page, path, viewport)
        found += scrolls_inside(page, path, viewport, tables)
        context.close()
    assert not found, "\n".join(found)


def settings_cookie() -> str:
    from django.conf import settings

    return settings.SESSION_COOKIE_NAME
