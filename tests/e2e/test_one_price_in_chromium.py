"""The same deployment shows the same $/Mtok on the leaderboard, its run page, /compare/ and
/costs/ under the same token basis and price tier, in a real browser."""

import re

import pytest
from django.core.management import call_command

from tests.e2e.conftest import screenshot
from tests.factories import document
from tests.reviews import ingest_reviewed

pytestmark = pytest.mark.django_db(transaction=True)

HEADING_SAYS = "b => document.querySelector('#leaderboard thead').innerText.includes('Mtok ' + b)"
DOLLARS = re.compile(r"\$(\d+\.\d{4})")


def dollars(text: str) -> list[str]:
    return DOLLARS.findall(text)


def test_one_deployment_one_price_on_every_page(live_server, page, org):
    call_command("loadreference", no_inferencex=True, verbosity=0)
    mi = ingest_reviewed(document=document(accelerator="MI355X", gpus=4, tp=4), org=org).run
    b200 = ingest_reviewed(document=document(accelerator="B200", quantization="FP8"), org=org).run
    tier = "owning_hyperscaler"

    for basis in ("output", "total"):
        page.goto(f"{live_server.url}/?model=GLM 5.2&scenario=seed-20k-1k-60&tier={tier}")
        if basis != "output":  # the default basis is output; switch through the form
            wanted = f"basis={basis}"
            with page.expect_response(lambda r, wanted=wanted: wanted in r.url):
                page.select_option("select[name=basis]", basis)
            page.wait_for_function(HEADING_SAYS, arg=basis)
        heading = page.locator("#leaderboard thead").inner_text()
        assert f"$/Mtok {basis}" in heading and f"{basis} tok/s/GPU" in heading
        row = page.locator("#leaderboard tbody tr", has_text="4×MI355X")
        (board,) = dollars(row.locator("td.usd-per-mtok").inner_text())

        page.goto(f"{live_server.url}/runs/{mi.pk}/?basis={basis}&tier={tier}")
        assert dollars(page.locator("#leaderboard-point .usd-per-mtok").inner_text()) == [board]

        page.goto(
            f"{live_server.url}/compare/?d={mi.deployment_id}&d={b200.deployment_id}"
            f"&basis={basis}&tier={tier}"
        )
        assert dollars(page.locator("#comparison td.usd-per-mtok").first.inner_text()) == [board]

        # The scenario's SLO (TTFT p99 <= 2.22 s, 99% success): /costs/ interpolates past the
        # leaderboard's measured point and shows that point's price beside its answer.
        page.goto(
            f"{live_server.url}/costs/?ttft_s_max=2.22&ttft_percentile=p99"
            f"&token_kind={basis}&tier={tier}"
        )
        cell = page.locator(f"#cost-table tr[data-run='{mi.pk}'] td.mtok").inner_text()
        assert board in dollars(cell), cell
        screenshot(page, f"one-price-{basis}")
