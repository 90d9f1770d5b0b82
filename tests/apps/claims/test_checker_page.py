"""The claim checker at /costs/claim/: its stored runs go through the one answer
(apps/costs/answer.py) at the claim's own SLO, for the model asked, with what differs; its
verdict card's link fits the card."""

import copy

import pytest

from tests.apps.costs.test_page import all_succeeded
from tests.reviews import ingest_reviewed

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(document, org):
    """The example run: 8 x MI355X MXFP4; c1 525 total tok/s/GPU at 212.8 tok/s/user, TTFT
    p99 0.499 s; c16 1,400 at 35.7, 2.18 s."""
    return ingest_reviewed(document=all_succeeded(document), org=org, is_public=True).run


def _b200(document, org, *, c16_total_tok_s: float):
    """The example run again on B200 with FP8 weights, its c16 at `c16_total_tok_s`."""
    other = copy.deepcopy(all_succeeded(document))
    other["idempotency_key"] = f"b200-run-{c16_total_tok_s:g}"
    other["deployment"] = dict(other["deployment"], accelerator="B200")
    other["deployment"]["quantization"] = {"weights": "FP8"}
    # Every rate of c16 scaled together (output and input stay the total's parts).
    tput = other["points"][1]["throughput"]
    scale = c16_total_tok_s / tput["total_tok_s"]
    for kind in ("input_tok_s", "output_tok_s", "total_tok_s"):
        tput[kind] *= scale
    return ingest_reviewed(document=other, org=org, is_public=True).run


def _stored(client, run, **asked) -> str:
    """The claim page's stored-run part for the example's model and scenario, total tokens."""
    query = {
        "model": run.deployment.model.name,
        "scenario": run.scenario.slug,
        "precision": "",
        "spec": "",
        "engine": "",
        "token_kind": "total",
        **asked,
    }
    page = client.get("/costs/claim/", query, HTTP_HX_REQUEST="true").content.decode()
    rows = [r for r in page.split("<tr") if "stored runs (the answer at the SLO" in r]
    notes = page.split('id="claim-stored"')[1].split("</section>")[0]
    return "".join(rows), notes


def test_the_claim_pairs_stored_runs_through_the_answer_at_its_own_slo(client, run, document, org):
    b200 = _b200(document, org, c16_total_tok_s=8000)
    # Floor 30: both sides' c16 meet (35.7 tok/s/user): 1,400 / 1,000 tok/s/GPU.
    row, notes = _stored(client, run, interactivity_min="30")
    assert f"run {run.pk} c=16 vs run {b200.pk} c=16" in row
    assert "<td>1.400</td>" in row
    # The answer's differing facts, not a dash.
    assert "precision: MXFP4 / FP8" in row
    assert "interactivity p50 ≥ 30 tok/s/user" in notes
    # Floor 100: only c1 meets (212.8 tok/s/user): 525 / 525. The SLO takes effect.
    row, notes = _stored(client, run, interactivity_min="100")
    assert f"run {run.pk} c=1 vs run {b200.pk} c=1 " in row and "<td>1.000</td>" in row
    # TTFT p99 at most 0.4 s: no point of either side meets, and the page says which.
    row, notes = _stored(client, run, interactivity_min="", ttft_s_max="0.4")
    assert row == ""
    assert "no MI355X point meets TTFT p99 ≤ 0.4 s" in notes


def test_the_claims_model_field_chooses_the_stored_runs(client, run, document, org):
    _b200(document, org, c16_total_tok_s=8000)
    row, notes = _stored(client, run, model="Another model")
    assert row == ""
    assert "no MI355X point matches the asked facts" in notes
    assert (
        'name="model" value="Another model"'
        in client.get("/costs/claim/", {"model": "Another model"}).content.decode()
    )


def test_the_verdict_cards_link_fits_the_card_and_the_page_offers_the_whole_link(client, db):
    from xml.etree import ElementTree

    query = "price_a=0.70&model=" + "a-very-long-model-name-" * 8 + "&engine=sglang&spec=none"
    card = ElementTree.fromstring(client.get(f"/costs/claim/verdict.svg?{query}").content)
    texts = [t.text or "" for t in card.iter("{http://www.w3.org/2000/svg}text")]
    # The link's lines are the card's last (its heading names the model, long or not).
    start = next(i for i, t in enumerate(texts) if t.startswith("http://testserver/"))
    link = texts[start:]
    assert len(link) == 2 and all(len(line) <= 72 for line in link)
    assert link[-1].endswith("…")  # the rest is on the page, with a copy button
    assert all(len(t) <= 72 for t in texts[:start] if "very-long" in t)  # the heading too
    page = client.get(f"/costs/claim/?{query}").content.decode()
    whole = page.split('<code id="claim-link">')[1].split("</code>")[0]
    assert whole.startswith("http://testserver/costs/claim/?price_a=0.70") and "sglang" in whole
    assert 'class="copy-text" data-copy="#claim-link"' in page
