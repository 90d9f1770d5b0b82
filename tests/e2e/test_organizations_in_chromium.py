"""The whole tenancy loop in Chromium: sign up, verify the email, create an organization,
invite a second person, create a token, submit a private run with it, see it as a member
and not anonymously, publish it, then see it anonymously."""

import re

import httpx
import pytest
from django.core import mail
from playwright.sync_api import expect

from apps.accounts.models import AuditEvent
from apps.runs.models import Run
from tests.e2e.conftest import screenshot
from tests.factories import document

pytestmark = pytest.mark.django_db(transaction=True)
CONFIRM = re.compile(r"https?://\S+/accounts/confirm-email/\S+/")


def sign_up(page, base: str, email: str) -> None:
    """Sign up, then open the verification link from the email the site sent."""
    sent_before = len(mail.outbox)
    page.goto(f"{base}/accounts/signup/")
    page.fill("input[name=email]", email)
    page.fill("input[name=password1]", "a long pass phrase 42")
    page.fill("input[name=password2]", "a long pass phrase 42")
    page.click("main button[type=submit]")
    page.wait_for_url(re.compile(r"/accounts/confirm-email/"))
    [message] = mail.outbox[sent_before:]
    assert message.to == [email]
    page.goto(CONFIRM.search(message.body).group(0))
    page.goto(f"{base}/org/")
    if "/accounts/login/" in page.url:  # verified in another session: sign in
        page.fill("input[name=login]", email)
        page.fill("input[name=password]", "a long pass phrase 42")
        page.click("main button[type=submit]")
        page.wait_for_url(re.compile(r"/org/"))
    assert email in page.locator("nav.usermenu").inner_text()


def board_url(base: str, run: Run) -> str:
    return f"{base}/?model={run.deployment.model.name}&scenario={run.scenario.slug}"


def test_an_organization_submits_privately_and_publishes(live_server, browser, mailoutbox):
    base = live_server.url
    owner = browser.new_context()
    page = owner.new_page()
    sign_up(page, base, "owner@example.com")
    page.fill("#org-name", "Acme Procurement")
    page.click("#create-org")
    assert page.locator("#my-role").inner_text() == "owner"

    page.fill("#invite-email", "member@example.com")
    page.select_option("#invite-role", "member")
    page.click("#create-invite")
    invite_link = page.locator("#invite-link").inner_text()
    page.fill("#token-name", "ci")
    page.click("#create-token")
    token = page.locator("#new-token").inner_text()
    # The token and a ready curl line for it copy with one click each.
    owner.grant_permissions(["clipboard-read", "clipboard-write"], origin=base)
    for source in ("#new-token", "#token-curl"):
        page.click(f"button[data-copy='{source}']")
        expect(page.locator(f"button[data-copy='{source}'] + .copy-status")).to_have_text("Copied.")
        if source == "#new-token":
            assert page.evaluate("navigator.clipboard.readText()") == token
    curl = page.evaluate("navigator.clipboard.readText()")
    assert f"Bearer {token}" in curl and curl.endswith(f"{base}/api/v1/runs")
    page.reload()
    assert token not in page.content()  # shown once

    response = httpx.post(
        f"{base}/api/v1/runs?private=true",
        json=document(),
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status_code == 201, response.text
    run = Run.objects.select_related("deployment__model", "scenario").get(pk=response.json()["id"])
    assert not run.is_public and run.org.name == "Acme Procurement"

    member = browser.new_context()
    second = member.new_page()
    sign_up(second, base, "member@example.com")
    second.goto(invite_link)
    second.click("#accept-invitation")
    assert second.locator("#my-role").inner_text() == "member"
    second.goto(board_url(base, run))
    row = second.locator(f"a[href='/runs/{run.pk}/']")
    assert row.count() == 1
    assert second.locator("table .badge-private").count() >= 1
    screenshot(second, "leaderboard-member-private-run")

    anonymous = browser.new_context().new_page()
    anonymous.goto(board_url(base, run))
    assert anonymous.locator(f"a[href='/runs/{run.pk}/']").count() == 0
    assert anonymous.goto(f"{base}/runs/{run.pk}/").status == 404

    page.goto(f"{base}/runs/{run.pk}/")
    # Publishing asks first; saying no leaves the run private.
    asked = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.dismiss()))
    page.click("#publish")
    assert asked and f"Publish run #{run.pk}" in asked[0]
    run.refresh_from_db()
    assert not run.is_public
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#publish")
    page.wait_for_selector("#unpublish")
    assert "published by owner@example.com" in page.content()
    # A new visitor: the server's page cache must not serve the page from before publishing.
    # A published self-reported run waits for a reviewer before it ranks on the default board
    # (issue 53): the board says so and shows it on request, marked, never as private.
    newcomer = browser.new_context().new_page()
    newcomer.goto(board_url(base, run))
    assert newcomer.locator(f"a[href='/runs/{run.pk}/']").count() == 0
    assert (
        "1 self-reported run waits for review" in newcomer.locator("#awaiting-review").inner_text()
    )
    newcomer.goto(board_url(base, run) + "&unchecked=1")
    assert newcomer.locator(f"a[href='/runs/{run.pk}/']").count() == 1
    assert newcomer.locator("table .badge-private").count() == 0
    assert AuditEvent.objects.filter(action="run.published", actor="owner@example.com").exists()
    # Unpublishing asks too: one click never takes a run off every public page.
    asked.clear()
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.dismiss()))
    page.click("#unpublish")
    assert asked and f"Unpublish run #{run.pk}" in asked[0]
    run.refresh_from_db()
    assert run.is_public
    for context in (owner, member, anonymous.context, newcomer.context):
        context.close()
