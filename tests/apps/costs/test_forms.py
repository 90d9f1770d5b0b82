"""The cost pages' query forms: what each value reads as, the words a refused one gets, and
each refused value explained once."""

from __future__ import annotations

import pytest
from django.http import QueryDict

from apps.claims.checker import SEED_CLAIM, fields_of, shipped_claims
from apps.costs.forms import ClaimQuery, ProcurementQuery
from apps.costs.formulas import TokenKind
from tests.apps.costs.books import AUGUST_2025


def problems(params: dict[str, str], book=None) -> list[tuple[str, str]]:
    return [(p.field, p.message) for p in ProcurementQuery(params, book).problems()]


# The checker opens on the seed's claim of the ledger: its fields under the query's.
SEED = fields_of(shipped_claims()[SEED_CLAIM])


def claim(query: str = "", own_prices=None) -> ClaimQuery:
    params = {**SEED, **QueryDict(query).dict()}
    return ClaimQuery(params, book=AUGUST_2025, own_prices=own_prices or {})


def claim_problems(query: str, own_prices=None) -> list[tuple[str, str]]:
    return [(p.field, p.message) for p in claim(query, own_prices).page([]).errors]


def test_it_rejects_a_negative_gpu_price():
    assert problems({"price_MI355X": "-1"}) == [("price_MI355X", "must not be negative (got -1)")]


def test_it_quotes_a_figure_that_is_no_number_as_read():
    assert problems({"headroom": " 2 x "}) == [("headroom", "must be a number (got '2 x')")]


@pytest.mark.parametrize("text", ["nan", "inf", "-Infinity"])
def test_it_refuses_a_figure_that_is_not_finite(text):
    assert problems({"requests_per_day": text}) == [("requests_per_day", "must be a finite number")]


def test_the_calculator_reads_thousands_separators_and_the_claim_page_does_not():
    query = ProcurementQuery({"requests_per_day": "2,000,000"})
    assert query.inputs().workload.requests_per_day == 2_000_000
    assert claim_problems("price_a=1,000") == [("price_a", "must be a number (got '1,000')")]


def test_a_blank_own_price_is_no_field_and_no_price():
    query = ProcurementQuery({"price_B200": "  ", "price_mi355x": "2.5"})
    assert "price_B200" not in query.data and "price_B200" not in query.fields
    assert query.inputs().own_prices == {"MI355X": 2.5}


def test_a_missing_value_takes_the_default_and_a_blank_one_is_blank():
    assert ProcurementQuery({}).data["requests_per_day"] == "1000000"
    assert problems({"requests_per_day": ""}) == [("requests_per_day", "is required")]


@pytest.mark.parametrize("gpus", ["0", "1.5", "-8", ""])
def test_it_rejects_gpus_per_node_that_are_no_whole_number(gpus):
    assert problems({"gpus_per_node": gpus}) == [
        ("gpus_per_node", "must be a whole number of at least 1")
    ]


def test_it_rejects_an_unknown_token_kind_and_an_empty_one():
    for kind in ("tokens", ""):
        assert problems({"token_kind": kind}) == [("token_kind", "must be input, output or total")]


def test_an_unknown_workload_unit_still_asks_for_requests_per_day():
    assert problems({"workload_unit": "furlongs", "requests_per_day": ""}) == [
        (
            "workload_unit",
            "must be one of requests_per_day, tokens_per_day, io_tokens_per_day, "
            "peak_requests_per_s (got 'furlongs')",
        ),
        ("requests_per_day", "is required"),
    ]


def test_a_success_rate_out_of_range_is_refused_with_the_other_problems_in_order():
    assert problems({"headroom": "x", "min_success_pct": "120", "e2el_s_max": "0"}) == [
        ("headroom", "must be a number (got 'x')"),
        ("min_success_pct", "must be between 0 and 100 (got 120)"),
        ("e2el_s_max", "must be greater than zero (got 0)"),
    ]


def test_a_power_figure_that_is_no_number_is_explained_once():
    # The capex price asked for the all-in kW too, as if the field had been left blank.
    params = {"capex_accelerator": "TPU9", "gpu_purchase_usd": "1", "kw_per_gpu": "lots"}
    assert problems(params, {}) == [("kw_per_gpu", "must be a number (got 'lots')")]


def test_it_rejects_a_negative_sell_price():
    assert problems({"sell_output_usd_per_mtok": "-2"}) == [
        ("sell_output_usd_per_mtok", "must not be negative (got -2)")
    ]


def test_the_fields_carry_the_labels_the_page_shows():
    query = ProcurementQuery({"price_b200": "1"})
    assert query.fields["requests_per_day"].label == "Requests/day"
    assert query.fields["price_b200"].label == "B200 own $/GPU-hr"


def test_the_claim_defaults_make_the_published_claim():
    page = claim().page([])
    assert page.errors == ()
    assert round(page.check.cost_ratio, 2) == 0.95


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("throughput_ratio=0", "must be greater than zero (got 0)"),
        ("throughput_ratio=-0.50", "must be greater than zero (got -0.50)"),
        ("throughput_ratio=", "is required"),
        ("throughput_ratio=x", "must be a number (got 'x')"),
    ],
)
def test_it_rejects_a_throughput_ratio_the_claim_cannot_have_once(query, message):
    assert claim_problems(query) == [("throughput_ratio", message)]


def test_it_rejects_an_unknown_tier_once_naming_the_tiers_there_are():
    ((field, message),) = claim_problems("tier_b=spot")
    assert field == "tier_b"
    assert message.startswith("no accelerator has a “spot” price (tiers: owning (hyperscaler)")


def test_b_priced_at_zero_is_named_by_its_own_price_field():
    assert claim_problems("price_b=0") == [("price_b", "must be greater than zero (got 0)")]


def test_a_comparison_that_is_none_is_reported_with_the_other_problems():
    assert claim_problems("comparison=%3E&price_a=x") == [
        ("price_a", "must be a number (got 'x')"),
        ("comparison", "must be <, <= or ~"),
    ]


def test_an_organizations_price_fills_a_side_left_blank_and_not_one_typed():
    assert claim("", {"MI355X": 0.9}).values["price_a"] == "0.9"
    assert claim("price_a=1.1", {"MI355X": 0.9}).values["price_a"] == "1.1"


def test_a_token_kind_the_claim_page_cannot_name_counts_output_tokens():
    query = claim("token_kind=bogus")
    assert query.is_valid()
    assert query.cleaned_data["token_kind"] is TokenKind.OUTPUT
    kind = claim("token_kind=input")
    assert kind.is_valid() and kind.cleaned_data["token_kind"] is TokenKind.INPUT
