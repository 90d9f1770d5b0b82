"""The procurement analyst's question on the shipped data, in Chromium at 1440 and 390 px:
"2 billion tokens a day at 20k in / 1k out, TTFT p99 ≤ 2 s: what do MI355X and B200 cost a
month at our prices, and how many GPUs?" Answered without sideways scrolling, and checked
against the arithmetic done by hand here."""

import math
import re

import pytest
from django.core.management import call_command

from tests.e2e.conftest import screenshot

pytestmark = pytest.mark.django_db(transaction=True)

OWN = {"MI355X": 1.60, "B200": 2.40}  # the buyer's $/GPU-hr
TOKENS_PER_DAY = 2_000_000_000
IN, OUT = 20_000, 1_000
# The shipped data measures both accelerators on DeepSeek-R1 at 8k in / 1k out (InferenceX,
# which reports TTFT p99 but no success rate, hence "Success ≥ 0%").
QUERY = (
    "model=DeepSeek-R1-0528&scenario=8k-1k&workload_unit=tokens_per_day"
    f"&tokens_per_day={TOKENS_PER_DAY}&input_tokens={IN}&output_tokens={OUT}"
    "&ttft_s_max=2&ttft_percentile=p99&min_success_pct=0"
    f"&price_MI355X={OWN['MI355X']}&price_B200={OWN['B200']}"
)


def by_hand(tok_per_s_per_gpu: float, gpus_per_replica: int, usd_per_gpu_hour: float):
    requests_per_day = TOKENS_PER_DAY / (IN + OUT)  # 95,238
    peak_output_tok_s = requests_per_day / 86_400 * 2 * 1.2 * OUT  # peak 2, headroom 20%
    replicas = math.ceil(peak_output_tok_s / (tok_per_s_per_gpu * gpus_per_replica))
    gpus = replicas * gpus_per_replica
    return gpus, math.ceil(gpus / 8), gpus * usd_per_gpu_hour * 730


def number(text: str) -> float:
    return float(re.sub(r"[^\d.]", "", text))


def test_the_analyst_gets_gpus_nodes_and_a_month_for_two_accelerators_at_own_prices(
    live_server, browser
):
    # Both widths in one test: the live server needs committed data, which a transactional
    # test flushes at its end, so one test per width stored the whole snapshot twice.
    call_command("loadreference", verbosity=0)
    for width in (1440, 390):
        context = browser.new_context(viewport={"width": width, "height": 900})
        page = context.new_page()
        page.goto(f"{live_server.url}/costs/?{QUERY}")
        conversions = page.locator("#conversions").inner_text()
        assert "2,000,000,000 tokens/day ÷ (20,000 input + 1,000 output)" in conversions
        assert "= 95,238 requests/day" in conversions

        for sku, price in OWN.items():
            card = page.locator(f"#cost-summary .cost-card[data-accelerator='{sku}']")
            run = card.get_attribute("data-run")
            row = page.locator(f"#cost-table tr.row-main[data-run='{run}']")
            label = row.locator("td.deployment-name a").inner_text()
            per_replica = int(re.search(r"(\d+)×" + sku, label).group(1))
            tput = number(row.locator("td.tput").inner_text().split()[0])
            gpus, nodes, month = by_hand(tput, per_replica, price)
            assert int(card.locator(".gpus").inner_text()) == gpus
            assert int(card.locator(".nodes").inner_text()) == nodes
            assert number(card.locator(".month").inner_text()) == round(month)
            assert f"${price:.3f}/GPU-hr (own, your own price)" in card.inner_text()
            # The answer is on screen, not off to the right.
            box = card.locator(".month").bounding_box()
            assert box["x"] + box["width"] <= width
            box = row.locator("td.month").bounding_box()
            assert box["x"] + box["width"] <= width
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        screenshot(page, f"procurement-analyst-{width}")
        context.close()
