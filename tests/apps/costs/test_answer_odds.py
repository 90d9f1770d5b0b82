"""P(A is cheaper than B) beside the answer's cost ratio, through GET /api/v1/compare/answer and
/answer/: stated with its method, the runs behind each side and what it leaves out; with one
run a side, not stated and said why; and the dated price set that priced the answer."""

from __future__ import annotations

import pytest

from tests.factories import document, point
from tests.reviews import ingest_reviewed

pytestmark = pytest.mark.django_db

QUESTION = (
    "/api/v1/compare/answer?model=GLM%205.2&scenario=seed-20k-1k-60&a=MI355X&b=B200&swing=false"
)


# The page's question: no default floor, any precision (the example runs are MXFP4).
ANSWER_PAGE = (
    "/answer/?model=GLM%205.2&scenario=seed-20k-1k-60&a=MI355X&b=B200&interactivity_min="
    "&precision=any&spec=any"
)


def _runs(org, accelerator: str, figures: list[float]) -> None:
    """Runs of one configuration at one level (a nightly sweep): `figures` output tok/s."""
    for n, figure in enumerate(figures):
        doc = document(
            accelerator=accelerator,
            points=[point(16, output_tok_s=figure, ttft_p99_ms=1000, interactivity=60)],
        )
        doc["idempotency_key"] = f"odds-{accelerator}-{n}-{figure:g}"
        ingest_reviewed(document=doc, org=org, is_public=True)


def test_repeated_runs_give_the_odds_with_their_method_and_what_they_leave_out(client, org):
    _runs(org, "MI355X", [2400, 2300, 2500])
    _runs(org, "B200", [2900, 3100])
    body = client.get(QUESTION).json()
    odds = body["odds"]
    assert odds["runs"] == {"a": 3, "b": 2}
    assert 0 <= odds["p_a_cheaper"] <= 1 and odds["monte_carlo_error"] < 0.02
    assert "resampled over the runs of its configuration" in odds["method"]
    assert any("pick of the best point" in item for item in odds["leaves_out"])
    # The prices drawn: every tier of every set up to the newest, named.
    assert "semianalysis-2026-07-rental owning_hyperscaler" in odds["prices"]
    assert body["price_set"]["name"] == "semianalysis-2026-07-rental"
    # A user's range instead: MI355X far dearer than B200 makes A's odds small.
    dear = client.get(f"{QUESTION}&price_range_a=9-10&price_range_b=1-1.1").json()["odds"]
    assert dear["p_a_cheaper"] < 0.01 and "drawn uniformly" in dear["prices"]
    refused = client.get(f"{QUESTION}&price_range_a=cheap")
    assert refused.status_code == 422
    assert refused.json()["detail"][0]["path"] == "price_range_a"
    page = client.get(ANSWER_PAGE).content.decode()
    assert "P(MI355X is cheaper than B200) = " in page
    assert "over 3 and 2 run(s)" in page
    assert 'class="price-set-name">semianalysis-2026-07-rental<' in page


def test_with_one_run_a_side_the_answer_says_so_instead_of_a_probability(client, org):
    _runs(org, "MI355X", [2400])
    _runs(org, "B200", [3000])
    odds = client.get(QUESTION).json()["odds"]
    assert odds["p_a_cheaper"] is None and odds["runs"] == {"a": 1, "b": 1}
    assert odds["notes"][0].startswith("one measurement per side")
    page = client.get(ANSWER_PAGE).content.decode()
    assert "P(MI355X is cheaper than B200): not stated" in page
    assert "One measurement per side" in page
