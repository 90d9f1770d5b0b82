"""The shipped InferenceX dataset as a newcomer meets it in Chromium: the board opens on ranked
rows of many accelerators with both charts drawn (1440 and 390 px), MI355X and B200 compare
like for like with what differs named, and accuracy shows GSM8K scores with intervals and FP4
against FP8 of one configuration beside its throughput."""

from urllib.parse import parse_qsl, urlencode, urlsplit

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

    # The default board (no query) ranks the rows that pass the board's rules: InferenceX's
    # latest rows with their recipe's flags, image tag and evaluation (issue 39).
    rows = page.request.get(live_server.url + "/?format=json").json()
    ranked = [r for r in rows if not r["rules_failed"]]
    accelerators = {r["deployment"].split(" · ")[0].split("×")[1] for r in ranked}
    assert len(ranked) >= 10 and len(accelerators) >= 4, (len(ranked), accelerators)
    assert {r["origin"] for r in ranked} == {"imported"}

    for width in (390, 1440):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(live_server.url + "/")
        assert page.locator("#board tbody a[href^='/runs/']").count() >= 10
        page.wait_for_selector("#chart-interactivity .main-svg .scatterlayer .point")
        page.wait_for_selector("#chart-latency .main-svg .scatterlayer .point")
        screenshot(page, f"real-data-board-{width}")
    assert page.locator("select[name=model] option[selected]").inner_text() == "DeepSeek-R1-0528"
    assert "only runs that pass the board's rules" in page.locator("#origin-text").inner_text()
    legend = page.locator("#chart-interactivity .legendtext").evaluate_all(
        "nodes => nodes.map(n => n.textContent)"
    )
    # Series are accelerator × precision ("B200 FP4"): the first word is the accelerator.
    skus = {text.split()[0] for text in legend}
    assert skus == accelerators, legend
    # The rows the rules leave off are a click away, marked not checked.
    page.click("#show-unchecked")
    page.wait_for_url("**unchecked=1**")
    page.wait_for_selector("#chart-interactivity .main-svg .scatterlayer .point")
    legend = page.locator("#chart-interactivity .legendtext").evaluate_all(
        "nodes => nodes.map(n => n.textContent)"
    )
    assert len({text.split()[0] for text in legend}) >= 9, legend
    note = page.locator(".source-note").inner_text()
    assert "imported from InferenceX" in note and "as of 2026-06-11" in note
    # The way in from the opening block: MI355X against B200, like for like.
    # The headline opens the one answer (issue 40) at its stated SLO: both sides with their
    # interactivity, what still differs, and the swing drawn with its crossover named.
    page.click("#start-headline")
    page.wait_for_url("**/answer/**")
    assert "interactivity p50 ≥ 30 tok/s/user" in page.locator("#answer-slo").inner_text()
    sides = page.locator("#answer-sides tbody tr").all_inner_texts()
    assert any("MI355X" in s for s in sides) and any("B200" in s for s in sides), sides
    assert page.locator("#answer-differs").is_visible()
    page.wait_for_selector("#chart-swing .main-svg .scatterlayer .point")
    assert "is cheaper" in page.locator("#answer-crossover").inner_text()
    screenshot(page, "real-data-answer")
    # /costs/ asked the same question shows the same dollars as the answer (its JSON).
    asked = dict(parse_qsl(urlsplit(page.url).query))
    answer = page.request.get(f"{live_server.url}/api/v1/compare/answer?{urlencode(asked)}").json()
    on_costs = {
        **asked,
        **{name: "" for name in ("engine", "spec") if asked.get(name, "any") == "any"},
        "min_success_pct": "0",
    }
    page.goto(f"{live_server.url}/costs/?{urlencode(on_costs)}")
    panel = page.locator("#cheaper-at-slo")
    assert (panel.get_attribute("data-a"), panel.get_attribute("data-b")) == (
        answer["a"]["sku"],
        answer["b"]["sku"],
    )
    for side in ("a", "b"):
        shown = panel.get_attribute(f"data-{side}-usd")
        usd = answer[side]["usd_per_mtok"]
        assert (float(shown) if shown else None) == (pytest.approx(usd) if usd else None)
    screenshot(page, "real-data-costs-answer")

    mi355x = _deployment(accelerator__sku="MI355X", engine__name="sglang", disaggregated=False)
    b200 = _deployment(accelerator__sku="B200", disaggregated=True)
    page.goto(f"{live_server.url}/compare/?d={mi355x.pk}&d={b200.pk}&scenario=8k-1k")
    screenshot(page, "real-data-compare")
    text = page.locator("#fairness").inner_text()
    assert "Engine" in text and f"sglang vs {b200.engine.name}" in text
    assert "Prefill and decode" in text
    assert f"aggregated vs disaggregated {b200.parallelism_label}" in text
    assert "Scenario" not in text  # like for like there
    # Both weigh FP8; only MI355X's recipe states its KV cache (--kv-cache-dtype fp8_e4m3).
    assert "Quantization: FP8 (act ?, kv FP8) vs FP8" in text
    # The columns are the one answer's points at the SLO the page states (issue 40).
    assert "interactivity p50 ≥ 30 tok/s/user" in page.locator("#compare-slo").inner_text()
    assert "best measured point" in page.locator("#compare-rule").inner_text()
    assert len(page.locator("td.answer-interactivity").all_inner_texts()) == 2

    page.goto(live_server.url + "/accuracy/")
    screenshot(page, "real-data-accuracy")
    # Scores with n and their 95% interval, and FP4 against FP8 labelled unpaired.
    row = page.locator("tr:has(td:text-is('inferencex-gsm8k'))").first
    cells = row.locator("td").all_inner_texts()
    # One row per evaluation: the strict match first, the flexible one under it.
    n, score, interval = cells[5], float(cells[6].splitlines()[0]), cells[7].splitlines()[0]
    low, high = (float(v) for v in interval.split("–"))
    assert n == "1319" and low < score < high
    assert "strict" in cells[4] and "flexible" in cells[4]
    # The quantization view opens on DeepSeek-R1 and draws FP4 against FP8 of one
    # configuration: the accuracy delta and the throughput ratio of the same pair.
    assert page.locator("input[name=model]").input_value() == "DeepSeek-R1-0528"
    page.wait_for_selector("#chart-trade .main-svg .scatterlayer .point")
    pairs = page.locator("#quantization-trade tbody tr:has(td:text('FP4 vs FP8'))")
    assert pairs.count() >= 1
    cells = pairs.first.locator("td").all_inner_texts()
    assert "points" in cells[3] and "unpaired" in cells[3]
    assert "×" in cells[4] and "%" in cells[4], cells
