"""A point the board calls invalid never prices (issue 41): /costs/ and the cost API read the
one validity rule (workers.figures.PointView) through the cost selectors."""

from __future__ import annotations

import pytest

from apps.costs.formulas import usd_per_mtok
from apps.costs.reference import reference_book
from apps.runs.models import Point
from tests.reviews import ingest_reviewed

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("costs_site")]

TTFT_ONLY = "ttft_s_max=2.22&token_kind=total&tier=owning_hyperscaler"


def _cheapest_client_bound(document, *, bound: bool) -> dict:
    """The example run with every request succeeded; its c16 point, the cheapest (most total
    tok/s per GPU, within the TTFT bound), client-bound or not."""
    document["points"][1]["requests"] = {"total": 33, "succeeded": 33, "failed": 0}
    document["points"][1]["errors"] = {}
    document["points"][1]["client_bound"] = bound
    return document


def _per_gpu(document, index: int) -> float:
    return document["points"][index]["throughput"]["total_tok_s"] / document["deployment"]["gpus"]


@pytest.mark.parametrize("bound", [False, True])
def test_it_prices_the_cheapest_point_only_when_its_client_was_not_the_limit(
    client, document, org, bound
):
    document = _cheapest_client_bound(document, bound=bound)
    run = ingest_reviewed(document=document, org=org, is_public=True).run
    cheapest, other = _per_gpu(document, 1), _per_gpu(document, 0)
    assert cheapest > other
    assert Point.objects.get(run=run, ordinal=1).client_bound is bound

    body = client.get(f"/api/v1/costs/runs/{run.pk}/slo?{TTFT_ONLY}").json()
    assert body["tok_per_s_per_gpu"] == pytest.approx(other if bound else cheapest)
    assert body["provenance"] == "measured"

    page = client.get(f"/costs/?{TTFT_ONLY}", HTTP_HX_REQUEST="true").content.decode()
    # The page prices with the newest set, as every page does by default.
    price = reference_book().prices["MI355X"].usd_per_gpu_hour["owning_hyperscaler"]
    priced = f"${usd_per_mtok(price, other if bound else cheapest):.4f}"
    refused = f"${usd_per_mtok(price, cheapest):.4f}"
    assert priced in page
    assert (refused in page) is not bound


def test_it_prices_nothing_when_every_point_is_client_bound(client, document, org):
    document = _cheapest_client_bound(document, bound=True)
    document["points"][0]["client_bound"] = True
    run = ingest_reviewed(document=document, org=org, is_public=True).run
    body = client.get(f"/api/v1/costs/runs/{run.pk}/slo?{TTFT_ONLY}").json()
    assert body.get("usd_per_mtok") is None
