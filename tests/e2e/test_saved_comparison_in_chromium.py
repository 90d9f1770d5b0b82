"""A saved comparison is the comparison on screen when Save was pressed, prices included: its
link and its printable page show an anonymous visitor every figure the member saw."""

import pytest
from django.core.management import call_command
from django.urls import reverse

from apps.costs.models import SavedPage
from apps.costs.services import price_profile_save
from tests.e2e.test_price_profile_in_chromium import figures, signed_in
from tests.factories import document
from tests.reviews import ingest_reviewed

pytestmark = pytest.mark.django_db(transaction=True)
TIER = "owning_hyperscaler"


def test_a_saved_comparison_shows_an_anonymous_visitor_the_members_figures(
    live_server, browser, page, org, person
):
    call_command("loadreference", no_inferencex=True, verbosity=0)
    ingest_reviewed(document=document(accelerator="MI355X", gpus=4, tp=4), org=org)
    ingest_reviewed(document=document(accelerator="B200", quantization="FP8"), org=org)
    member_user = person(org)
    # The profile prices both sides unlike any reference tier, as the member's own book does.
    price_profile_save(
        org=org, user=member_user, name="Acme", usd_per_gpu_hour={"MI355X": 3.1, "B200": 4.7}
    )
    base = live_server.url
    member = signed_in(browser, live_server, member_user).new_page()
    member.goto(f"{base}/costs/?ttft_s_max=2.22&ttft_percentile=p99&tier={TIER}")
    first = figures(member)
    # A change after the page loaded recalculates through HTMX: the save keeps this state.
    with member.expect_response(lambda r: "requests_per_day=250000" in r.url):
        member.fill("input[name=requests_per_day]", "250000")
    member.wait_for_function("() => !document.querySelector('.htmx-request')")
    mine = figures(member)
    assert mine and mine != first  # the change moved the figures, so a stale save would show
    member.fill("#page-name", "Two sides at our prices")
    # Awaited by its own answer, not by "a navigation", which HTMX's history push also is.
    with member.expect_response(
        lambda r: r.request.method == "POST" and r.url.endswith("/costs/saved/")
    ) as answer:
        member.click("#save-page")
    assert answer.value.status == 302
    saved = SavedPage.objects.get(org=org, name="Two sides at our prices")

    page.goto(base + reverse("costs:saved", args=[saved.slug]))
    assert figures(page) == mine
    assert "MI355X $3.1" in page.locator("#priced-by").inner_text()
    printable = page.locator("#printable").get_attribute("href")
    page.goto(base + printable)
    assert page.locator("#cost-form").count() == 0  # the printable page, not the form
    assert figures(page) == mine
