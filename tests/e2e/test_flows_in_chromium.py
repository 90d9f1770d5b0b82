"""The flows people stumbled on (issue 60), in Chromium at 390 and 1440 px: the board's answer
on the first screen, /answer/'s table whole at 1440 px, labels without recipe variables, the
navigation's /compare/, the claim checker reached from the GLM 5.2 story, and the README's
example submission kept off public pages."""

import re
from pathlib import Path

import pytest
from django.core.management import call_command

from apps.accounts.services import organization_get_or_create, token_create
from tests.e2e.conftest import screenshot

pytestmark = pytest.mark.django_db(transaction=True)

README = Path(__file__).resolve().parents[2] / "README.md"
# A shell variable left in a label ("-tp $TP"); a price ("$1.48") is not one.
RECIPE_VARIABLE = re.compile(r"\$\{?[A-Za-z_]")


def test_the_shipped_data_reads_as_an_answer_with_labels_people_can_read(live_server, page):
    call_command("loadreference", verbosity=0)
    for width in (390, 1440):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(live_server.url + "/")
        sentence = page.locator("#answer-sentence")
        assert sentence.is_visible()
        text = sentence.inner_text()
        assert re.search(r"(MI355X|B200) serves \d+\.\d\d× the output tokens per GPU", text), text
        assert "$" in text and "per million output tokens" in text
        answer_top = page.locator("#board-answer").bounding_box()["y"]
        assert answer_top < page.locator("#filters-fold").bounding_box()["y"]
        assert page.locator("#answer-first-table tbody tr").count() == 2
        screenshot(page, f"flows-board-{width}")

        # The navigation's "Compare" opens the picker: a page, not an error.
        with page.expect_response(lambda r: r.url.endswith("/compare/")) as opened:
            page.click("nav a[href='/compare/']")
        assert opened.value.status == 200
        assert page.locator("#compare-start").is_visible()

        page.goto(live_server.url + "/answer/")
        wrap = page.locator("#answer-sides").locator("xpath=..")
        widths = wrap.evaluate("w => [w.scrollWidth, w.clientWidth]")
        if width == 1440:
            assert widths[0] <= widths[1], widths  # no column hidden behind a sideways scroll
        assert page.locator("#answer-crossover").count() == 1
        screenshot(page, f"flows-answer-{width}")

    # No deployment label holds a recipe's shell variable: every row of the board (rules
    # failed or not) and every deployment the compare picker offers.
    rows = page.request.get(live_server.url + "/?unchecked=1&format=json").json()
    labels = [r["deployment"] for r in rows]
    page.goto(live_server.url + "/compare/")
    choices = page.locator("#add-deployment option").all_inner_texts()[1:]
    assert len(labels) > 10 and len(choices) > 100
    assert [label for label in labels + choices if RECIPE_VARIABLE.search(label)] == []
    assert len(set(choices)) == len(choices)  # no two entries of the picker read alike
    page.fill("#find-deployment", "mi355x fp4")
    shown = page.locator("#add-deployment option:not([hidden])").all_inner_texts()[1:]
    assert shown and all("MI355X" in s and "FP4" in s.upper() for s in shown), shown[:5]

    # The claim checker opened from the GLM 5.2 story asks about GLM 5.2's stored runs.
    page.goto(live_server.url + "/story/glm-5-2/")
    page.click("text=Check the claim with your own prices")
    page.wait_for_url("**/costs/claim/**")
    stored = page.locator("#claim-stored").inner_text()
    assert "GLM 5.2" in stored and "DeepSeek" not in stored, stored
    card = page.request.get(
        live_server.url + "/costs/claim/verdict.svg?claim=wafer-glm52-half-cost"
    )
    assert "GLM 5.2" in card.text() and "Source: Reports of Wafer" in card.text()


def test_the_readmes_example_submission_stays_off_public_pages(live_server, page, browser):
    # The README's own command: its URL and its document, as a reader would paste them.
    readme = README.read_text()
    url = re.search(r'curl -sS -X POST "?(http://127\.0\.0\.1:8000/api/v1/runs[^"\s]*)', readme)
    data = re.search(r"--data @(\S+)", readme)
    assert url and data, "the README's example submission moved"
    org = organization_get_or_create(slug="acme")
    token = token_create(org=org, name="readme").plaintext
    body = (README.parent / data.group(1)).read_bytes()
    path = url.group(1).removeprefix("http://127.0.0.1:8000")
    posted = page.request.post(
        live_server.url + path,
        data=body,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    assert posted.status == 201, posted.text()
    run = posted.json()
    assert run["visibility"] == "private"

    anonymous = browser.new_context()
    visitor = anonymous.new_page()
    assert visitor.goto(f"{live_server.url}{run['page']}").status == 404
    for width in (390, 1440):
        visitor.set_viewport_size({"width": width, "height": 900})
        for where in ("/", "/accuracy/"):
            visitor.goto(live_server.url + where)
            assert visitor.locator(f"a[href='{run['page']}']").count() == 0, where
            # Neither a row nor a model to pick: the run's model exists only in that run.
            tables = " ".join(visitor.locator("main table").all_inner_texts())
            options = visitor.locator("main select option").all_inner_texts()
            assert "GLM 5.2" not in tables and "GLM 5.2" not in options, where
    anonymous.close()
    # Its organization still has it.
    mine = page.request.get(
        f"{live_server.url}{run['url']}", headers={"Authorization": f"Bearer {token}"}
    )
    assert mine.status == 200 and mine.json()["id"] == run["id"]
