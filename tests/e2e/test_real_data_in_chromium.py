"""The shipped InferenceX dataset as a newcomer meets it in Chromium: the board opens on many
accelerators with both charts drawn, MI355X and B200 compare like for like with what differs
named, and accuracy shows GSM8K scores with intervals."""

import pytest
from django.core.management import call_command

from apps.catalog.models import Deployment
from tests.e2e.conftest import screenshot

pytestmark = pytest.mark.django_db(transaction=True)


def _deployment(**facts) -> Deployment:
    found = (
        Deployment.objects.filter(model__name="DeepSeek-R1-0528", quant_weights="FP8", **facts)
        .filter(runs__scenario__slug="8k-1k", runs__best_point__isnull=False)
        .order_by("pk")
        .first()
    )
    assert found is not None, facts
    return found


def test_a_newcomer_sees_inferencex_on_the_board_compares_mi355x_with_b200_and_reads_gsm8k(
    live_server, page
):
    call_command("loadreference", verbosity=0)

    page.goto(live_server.url + "/")
    # No shipped row states an image digest and engine flags: the default board ranks none of
    # them and says how many it left off, with the way to see them marked "not checked".
    assert "left off" in page.locator("#unchecked-note").inner_text()
    assert page.locator("#board tbody a[href^='/runs/']").count() == 0
    page.click("#show-unchecked")
    page.wait_for_url("**unchecked=1**")
    page.wait_for_selector("#chart-interactivity .main-svg .scatterlayer .point")
    page.wait_for_selector("#chart-latency .main-svg .scatterlayer .point")
    screenshot(page, "real-data-board")
    assert page.locator("select[name=model] option[selected]").inner_text() == "DeepSeek-R1-0528"
    legend = page.locator("#chart-interactivity .legendtext").evaluate_all(
        "nodes => nodes.map(n => n.textContent)"
    )
    # Series are accelerator × precision ("B200 FP4"): the first word is the accelerator.
    skus = {text.split()[0] for text in legend}
    assert len(skus) >= 9, legend
    note = page.locator(".source-note").inner_text()
    assert "imported from InferenceX" in note and "as of 2026-06-11" in note
    # The way in from the opening block: MI355X against B200, like for like.
    page.click("#start-headline")
    page.wait_for_url("**/compare/**")
    headers = page.locator("table.data th a").all_inner_texts()
    assert any("MI355X" in h for h in headers) and any("B200" in h for h in headers)

    mi355x = _deployment(accelerator__sku="MI355X", engine__name="sglang", disaggregated=False)
    b200 = _deployment(accelerator__sku="B200", disaggregated=True)
    page.goto(f"{live_server.url}/compare/?d={mi355x.pk}&d={b200.pk}&scenario=8k-1k")
    screenshot(page, "real-data-compare")
    text = page.locator("#fairness").inner_text()
    assert "Engine" in text and f"sglang vs {b200.engine.name}" in text
    assert "Prefill and decode" in text
    assert f"aggregated vs disaggregated {b200.parallelism_label}" in text
    assert "Quantization" not in text and "Scenario" not in text  # like for like there

    page.goto(live_server.url + "/accuracy/?model=DeepSeek-R1-0528&accelerator=MI355X&task=gsm8k")
    screenshot(page, "real-data-accuracy")
    # Scores with n and their 95% interval, and FP4 against FP8 labelled unpaired.
    row = page.locator("tr:has(td:text-is('inferencex-gsm8k'))").first
    cells = row.locator("td").all_inner_texts()
    n, score, interval = cells[5], float(cells[6]), cells[7]
    low, high = (float(v) for v in interval.split("–"))
    assert n == "1319" and low < score < high
    assert page.locator(".badge:text('unpaired')").count() > 0
