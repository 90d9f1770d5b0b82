"""A price profile saved in one organization reprices every page that shows money for its
members, identically, and nothing for another organization or an anonymous visitor; a
permalink of /costs/ opened anonymously reproduces the member's numbers."""

import re

import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import Client

from apps.accounts.services import organization_get_or_create
from apps.costs.models import PriceProfile
from tests.e2e.conftest import screenshot
from tests.factories import document
from tests.reviews import ingest_reviewed

pytestmark = pytest.mark.django_db(transaction=True)
DOLLARS = re.compile(r"\$(\d+\.\d{4})")
TIER = "owning_hyperscaler"
MI355X_OWN = 0.8  # $/GPU-hr in the profile (the reference tier has another price)


def signed_in(browser, live_server, user):
    client = Client()
    client.force_login(user)
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
    context.add_cookies(
        [{"name": settings.SESSION_COOKIE_NAME, "value": cookie, "url": live_server.url}]
    )
    return context


FIGURES = "#cost-table tr.row-main td:is(.gpus, .nodes, .month, .per-request, .served, .mtok)"


def saved_profile(response) -> bool:
    return response.request.method == "POST" and response.url.endswith("/costs/profiles/")


def figures(page) -> list[str]:
    """Every figure of the cost table (GPUs, nodes, $/month, $/request, $/Mtok)."""
    return page.locator(FIGURES).all_inner_texts()


def four_pages(page, base: str, mi, b200) -> list[str]:
    """The $/Mtok output of the 4×MI355X deployment on the leaderboard, its run page,
    /compare/ and /costs/ (each at the point the answer's rule chooses, a measured one)."""
    page.goto(f"{base}/?model=GLM 5.2&scenario=seed-20k-1k-60&tier={TIER}")
    row = page.locator("#leaderboard tbody tr", has_text="4×MI355X")
    board = DOLLARS.findall(row.locator("td.usd-per-mtok").inner_text())
    page.goto(f"{base}/runs/{mi.pk}/?tier={TIER}")
    run = DOLLARS.findall(page.locator("#leaderboard-point .usd-per-mtok").inner_text())
    page.goto(f"{base}/compare/?d={mi.deployment_id}&d={b200.deployment_id}&tier={TIER}")
    compare = DOLLARS.findall(page.locator("#comparison td.usd-per-mtok").first.inner_text())
    page.goto(f"{base}/costs/?ttft_s_max=2.22&ttft_percentile=p99&tier={TIER}")
    costs = page.locator(f"#cost-table tr[data-run='{mi.pk}'] td.mtok")
    return [*board, *run, *compare, *DOLLARS.findall(costs.inner_text())]


def test_a_profile_reprices_every_page_for_its_organization_only(
    live_server, browser, page, org, person
):
    call_command("loadreference", no_inferencex=True, verbosity=0)
    mi = ingest_reviewed(document=document(accelerator="MI355X", gpus=4, tp=4), org=org).run
    b200 = ingest_reviewed(document=document(accelerator="B200", quantization="FP8"), org=org).run
    base = live_server.url
    point = mi.best_point
    # By hand: $/GPU-hr ÷ (output tok/s per GPU × 3600 s ÷ 1e6 tokens).
    own = f"{MI355X_OWN / (point.output_tok_s / 4 * 3600 / 1e6):.4f}"

    anonymous_before = four_pages(page, base, mi, b200)
    assert len(set(anonymous_before)) == 1 and anonymous_before[0] != own, anonymous_before

    member = signed_in(browser, live_server, person(org)).new_page()
    member.goto(f"{base}/costs/?price_B200=1.5")
    with member.expect_response(lambda r: f"price_MI355X={MI355X_OWN}" in r.url):
        member.fill("input[name=price_MI355X]", str(MI355X_OWN))  # typed, not in the URL
    member.fill("#profile-name", "Acme 2026")
    # Leaving the price field asks the calculator again (its `change` trigger); that request and
    # its history push must be over before the save, and the save is awaited by its own answer,
    # not by "a navigation", which the history push also is.
    member.wait_for_function("() => !document.querySelector('.htmx-request')")
    with member.expect_response(saved_profile) as answer:
        member.click("#save-profile")
    assert answer.value.status == 302
    member.goto(f"{base}/costs/")  # no prices in the URL now: the profile gives them
    assert member.locator("#active-profile").inner_text() == "“Acme 2026”"
    assert four_pages(member, base, mi, b200) == [own] * 4
    member.goto(f"{base}/?model=GLM 5.2&scenario=seed-20k-1k-60&tier={TIER}")
    assert "Acme 2026" in member.locator("#own-prices").inner_text()
    screenshot(member, "price-profile-leaderboard")

    other = organization_get_or_create(slug="globex")
    outsider = signed_in(browser, live_server, person(other)).new_page()
    assert four_pages(outsider, base, mi, b200) == anonymous_before
    assert four_pages(page, base, mi, b200) == anonymous_before

    # The member's permalink carries the profile's prices: anyone who opens it sees them.
    member.goto(f"{base}/costs/?ttft_s_max=2.22&ttft_percentile=p99&tier={TIER}")
    link = member.locator("#permalink").get_attribute("href")
    mine = figures(member)
    page.goto(base + link)
    assert figures(page) == mine
    assert DOLLARS.findall(
        page.locator(f"#cost-table tr[data-run='{mi.pk}'] td.mtok").inner_text()
    ) == [own]
    saved = PriceProfile.objects.get(org=org, active=True)
    assert saved.usd_per_gpu_hour == {"MI355X": MI355X_OWN, "B200": 1.5}
