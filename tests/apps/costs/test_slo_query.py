"""One SLO query (apps/costs/slo_query.py) behind the API and the pages: a tier, the default one
unless named, bounds set over it, and one success floor; a value it refuses names its field."""

import re

import pytest

from apps.costs.formulas import CostInputError
from apps.costs.slo_query import SloAsk, SloQuery, slo_ask_of
from tests.factories import document, point
from tests.reviews import ingest_reviewed

pytestmark = pytest.mark.django_db

EIGHT_K = type("Scenario", (), {"input_tokens": 8192})()
ANSWER = {"model": "GLM 5.2", "scenario": "8k-1k", "a": "MI355X", "b": "B200", "swing": "false"}


@pytest.fixture
def runs(org):
    for sku in ("MI355X", "B200"):
        points = [
            point(4, output_tok_s=800, ttft_p99_ms=900, interactivity=90),
            point(16, output_tok_s=2400, ttft_p99_ms=3000, interactivity=40),
            point(64, output_tok_s=4800, ttft_p99_ms=9000, interactivity=15),
        ]
        ingest_reviewed(document=document(accelerator=sku, preset="8k-1k", points=points), org=org)


def test_unasked_it_is_the_default_tier_with_its_success_floor():
    asked = SloQuery().slo_ask().resolve(EIGHT_K)
    assert asked.tier.name == "interactive" and asked.changed == ()
    assert asked.slo.min_success_rate == 0.99
    assert asked.describe() == (
        "interactive tier: TTFT p99 ≤ 4.5 s, interactivity p50 ≥ 30 tok/s/user, success ≥ 99%"
    )


def test_a_bound_replaces_the_tiers_none_removes_it_and_blank_keeps_it():
    asked = slo_ask_of({"slo": "standard", "ttft_p99_s_max": "3", "interactivity_min": ""})
    resolved = asked.resolve(EIGHT_K)
    assert resolved.slo.describe() == (
        "TTFT p99 ≤ 3 s, interactivity p50 ≥ 12.5 tok/s/user, success ≥ 99%"
    )
    assert resolved.changed == ("TTFT p99 ≤ 3 s set",)
    dropped = slo_ask_of({"interactivity_min": "none"}).resolve(EIGHT_K)
    assert dropped.slo.describe() == "TTFT p99 ≤ 4.5 s, success ≥ 99%"
    assert dropped.describe().startswith("interactive tier, no interactivity p50 bound: ")
    # The throughput-only tier bounds no latency, so its SLO judges nothing.
    assert not SloAsk("throughput").resolve(EIGHT_K).slo.bounds


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"slo": "fast"}, "slo"),
        ({"interactivity_min": "lots"}, "interactivity_min"),
        ({"ttft_s_max": "-1"}, "ttft_s_max"),
        ({"min_success_rate": "2"}, "min_success_rate"),
        ({"ttft_s_max": "2", "ttft_percentile": "p42"}, "ttft_percentile"),
    ],
)
def test_a_value_it_cannot_ask_is_refused_naming_its_field(params, field):
    with pytest.raises(CostInputError) as refused:
        slo_ask_of(params).resolve(EIGHT_K)
    assert refused.value.field == field


def test_the_api_and_the_pages_default_to_the_same_tier_and_say_it(client, runs):
    api = client.get("/api/v1/compare/answer", ANSWER).json()
    assert api["slo_tier"]["name"] == "interactive"
    assert api["slo"].startswith("interactive tier: TTFT p99 ≤ 4.5 s")
    # c16 meets the tier on both sides (40 tok/s/user, TTFT p99 3 s); c64 does not.
    assert (api["a"]["point"]["level"], api["b"]["point"]["level"]) == ("c=16", "c=16")
    answer = client.get("/answer/", ANSWER).content.decode()
    board = client.get("/", {"model": "GLM 5.2", "scenario": "8k-1k"}).content.decode()
    costs = client.get("/costs/", {"model": "GLM 5.2", "scenario": "8k-1k"}).content.decode()
    for page, element in ((answer, "answer-slo"), (board, "slo-text"), (costs, "slo-text")):
        shown = re.search(rf'id="{element}" data-tier="([^"]+)">([^<]*)<', page)
        assert shown and shown.group(1) == "interactive", element
        assert shown.group(2).startswith("interactive tier: TTFT p99 ≤ 4.5 s"), element
    # Another tier is one parameter, the same on every surface.
    api = client.get("/api/v1/compare/answer", {**ANSWER, "slo": "throughput"}).json()
    assert api["slo"] == "throughput-only tier: bounds no latency"
    assert api["a"]["point"]["level"] == "c=64"
    board = client.get("/", {"model": "GLM 5.2", "scenario": "8k-1k", "slo": "throughput"})
    assert "throughput-only tier: bounds no latency" in board.content.decode()


def test_a_refused_slo_is_a_422_naming_its_field_in_the_api_and_a_named_problem_on_pages(
    client, runs
):
    response = client.get("/api/v1/compare/answer", {**ANSWER, "slo": "fast"})
    assert response.status_code == 422
    assert "slo" in response.content.decode() and "unknown SLO tier" in response.content.decode()
    response = client.get("/api/v1/compare/answer", {**ANSWER, "interactivity_min": "lots"})
    assert response.status_code == 422 and "interactivity_min" in response.content.decode()
    costs = client.get("/costs/", {"model": "GLM 5.2", "slo": "fast"}, HTTP_HX_REQUEST="true")
    assert 'data-field="slo"' in costs.content.decode()
    board = client.get("/", {"model": "GLM 5.2", "scenario": "8k-1k", "slo": "fast"})
    page = board.content.decode()
    assert "SLO tier: “fast” is not a choice here" in page
    assert 'data-tier="interactive"' in page  # the default, shown instead
