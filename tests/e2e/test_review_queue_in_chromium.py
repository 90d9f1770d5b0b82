"""The board's rules and the review queue in Chromium: a published run that fails a rule names
it on its page and stays off the default board; a passing run proposed by its organization's
admin and approved by site staff in the queue then ranks on the official board."""

import re

import pytest
from django.contrib.auth.models import Permission

from apps.runs.services import run_ingest
from tests.e2e.conftest import screenshot
from tests.factories import document

pytestmark = pytest.mark.django_db(transaction=True)


def sign_in(page, base: str, email: str) -> None:
    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=login]", email)
    page.fill("input[name=password]", "pw")
    page.click("main button[type=submit]")
    page.wait_for_url(re.compile(r"^(?!.*/accounts/login/)"))


def board_run_links(page, url: str) -> set[str]:
    page.goto(url)
    return set(page.locator("#board a[href^='/runs/']").evaluate_all("a => a.map(x => x.href)"))


def test_a_failing_run_is_named_and_off_the_board_and_an_approved_run_ranks_officially(
    live_server, browser, org, person
):
    base = live_server.url
    failing = document(accelerator="H200")
    failing["deployment"]["engine_flags"] = []
    del failing["deployment"]["engine"]["image_digest"]
    bad = run_ingest(document=failing, org=org).run
    good = run_ingest(document=document(accelerator="B200"), org=org).run
    admin = person(org, "admin", email="admin@example.com")
    staff = person(email="staff@example.com")
    staff.user_permissions.add(Permission.objects.get(codename="review_runs"))
    assert admin and staff

    visitor = browser.new_context().new_page()
    visitor.goto(f"{base}/runs/{bad.pk}/")
    failed = visitor.locator("#rules-failed li").evaluate_all(
        "items => items.map(i => i.dataset.rule)"
    )
    assert failed == ["facts_complete", "engine_flags_disclosed"]
    assert "not checked" in visitor.locator("#rules-status").inner_text()
    assert visitor.locator("#run-origin").inner_text() == "submitted"
    board = f"{base}/?scenario=seed-20k-1k-60"
    # Self-reported and published, the passing run waits for a reviewer before it ranks on
    # the default board (issue 53); a visitor may include it, marked awaiting review.
    links = board_run_links(visitor, board)
    assert f"{base}/runs/{good.pk}/" not in links and f"{base}/runs/{bad.pk}/" not in links
    assert (
        "2 self-reported runs wait for review" in visitor.locator("#awaiting-review").inner_text()
    )
    assert "only runs that pass the board" in visitor.locator("#origin-text").inner_text()
    included = board_run_links(visitor, f"{board}&unchecked=1")
    assert f"{base}/runs/{good.pk}/" in included
    official = f"{board}&official=1"
    assert board_run_links(visitor, official) == set()

    owner = browser.new_context().new_page()
    sign_in(owner, base, "admin@example.com")
    owner.goto(f"{base}/runs/{good.pk}/")
    owner.click("#propose")
    owner.wait_for_selector("#review-status")
    assert "proposed" in owner.locator("#review-status").inner_text()

    reviewer = browser.new_context().new_page()
    sign_in(reviewer, base, "staff@example.com")
    reviewer.goto(f"{base}/staff/reviews/")
    section = reviewer.locator(f"section[data-run='{good.pk}']")
    assert "passes every rule" in section.locator(".findings").inner_text()
    section.locator("input[name=reason]").fill("facts and rules check out")
    section.locator("button[value=approve]").click()
    reviewer.wait_for_selector("#no-reviews")

    assert board_run_links(visitor, official) == {f"{base}/runs/{good.pk}/"}
    links = board_run_links(visitor, board)
    assert f"{base}/runs/{good.pk}/" in links and f"{base}/runs/{bad.pk}/" not in links
    visitor.goto(f"{base}/runs/{good.pk}/")
    assert "approved: facts and rules check out" in visitor.locator("#review-status").inner_text()
    screenshot(visitor, "review-approved-run")
