"""An organization's own tier prices the board and the answer identically (issue 57): both
read the one price book (apps/costs/selectors.price_book), which puts the organization's own
price of a tier over the reference one, for its members only."""

from __future__ import annotations

import pytest

from apps.catalog.models import Accelerator, PriceTier
from apps.costs.selectors import price_book
from apps.leaderboard import selectors
from tests.factories import document, point
from tests.reviews import ingest_reviewed

pytestmark = pytest.mark.django_db

TIER = "owning_hyperscaler"
OWN = {"MI355X": 0.91, "B200": 1.37}  # the organization's negotiated $/GPU-hr at TIER
QUESTION = {"model": "GLM 5.2", "scenario": "8k-1k", "a": "MI355X", "b": "B200", "tier": TIER}
BOARD = {"model": "GLM 5.2", "scenario": "8k-1k", "tier": TIER, "format": "json"}


@pytest.fixture
def runs(org):
    made = {}
    for sku in OWN:
        points = [point(16, output_tok_s=2400, ttft_p99_ms=2000, interactivity=40)]  # 300/GPU
        doc = document(accelerator=sku, preset="8k-1k", points=points)
        made[sku] = ingest_reviewed(document=doc, org=org, is_public=True).run
    for sku, usd in OWN.items():
        PriceTier.objects.create(
            accelerator=Accelerator.objects.get(sku=sku), tier=TIER, usd_per_gpu_hour=usd, org=org
        )
    return made


def board_prices(client) -> dict[str, float]:
    rows = client.get("/", BOARD).json()
    return {r["deployment"].split("×")[1].split(" ")[0]: r["usd_per_gpu_hour"] for r in rows}


def answer_prices(client, **headers: str) -> dict[str, float]:
    body = client.get("/api/v1/compare/answer", QUESTION, **headers).json()
    sides = {"a": QUESTION["a"], "b": QUESTION["b"]}
    return {sku: body[side]["point"]["usd_per_gpu_hour"] for side, sku in sides.items()}


def test_an_organizations_own_tier_prices_the_board_and_the_answer_alike(
    client, org, person, runs, auth
):
    reference = {sku: price_book()[sku].usd_per_gpu_hour[TIER] for sku in OWN}
    assert reference != OWN
    # Anonymous: the reference tier on both pages.
    assert board_prices(client) == answer_prices(client) == reference

    # A member: the organization's own tier on the board, its chart and the answer alike.
    client.force_login(person(org))
    on_board = board_prices(client)
    assert on_board == answer_prices(client, HTTP_AUTHORIZATION=auth["HTTP_AUTHORIZATION"])
    assert on_board == OWN
    board = selectors.Board(model="GLM 5.2", scenario="8k-1k", tier=TIER)
    page = selectors.leaderboard_rows(board=board, org=org)
    charted = selectors.chart_points(run_ids=page.run_ids, board=board, org=org)
    per_mtok = {sku: usd / (300 * 3600 / 1e6) for sku, usd in OWN.items()}  # 300 tok/s/GPU
    assert {p["accelerator"]: p["usd_per_mtok"] for p in charted} == pytest.approx(per_mtok)


def test_a_members_board_charts_price_with_the_organizations_own_tier(client, org, person, runs):
    client.force_login(person(org))
    view = {k: v for k, v in BOARD.items() if k != "format"}
    figure = client.get("/", {**view, "y": "usd_per_mtok"}).context["pareto_interactivity"]
    per_mtok = {f"{sku}": usd / (300 * 3600 / 1e6) for sku, usd in OWN.items()}
    drawn = {trace["name"].split()[0]: trace["y"][0] for trace in figure["data"]}
    assert drawn == pytest.approx(per_mtok)
