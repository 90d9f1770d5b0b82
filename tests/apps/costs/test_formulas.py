"""Hand-computed checks of the cost formulas (docs/methodology.md, "$/Mtok" and "Prices")."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from apps.costs.formulas import (
    USER_PRICE_SOURCE,
    CapexOpex,
    CostInputError,
    Throughput,
    Tier,
    TokenMix,
    blended_usd_per_mtok,
    capex_opex_usd_per_gpu_hour,
    choose_price,
    deployment_usd_per_mtok,
    joules_per_token,
    mtok_costs,
    tier_price,
    tier_usd_per_gpu_hour,
    tok_per_s_per_mw,
    usd_per_mtok,
)
from tests.apps.costs.books import AUGUST_2025

FIXTURES = Path(__file__).parent / "fixtures"


def test_the_seed_deployment_costs_1_2524_per_mtok():
    # 8 GPUs x $1.48/h = $11.84/h; 2,626 tok/s x 3600 s = 9.4536 Mtok/h; 11.84 / 9.4536.
    assert deployment_usd_per_mtok(1.48, 8, 2626) == pytest.approx(1.252433, abs=1e-6)
    assert round(deployment_usd_per_mtok(1.48, 8, 2626), 4) == 1.2524


def test_one_gpu_at_one_dollar_and_1000_tok_s_costs_0_2778_per_mtok():
    # $1/h over 3.6 Mtok/h.
    assert usd_per_mtok(1.0, 1000) == pytest.approx(1 / 3.6)


def test_a_free_gpu_costs_nothing_per_token():
    assert usd_per_mtok(0.0, 500) == 0.0


@pytest.mark.parametrize("throughput", [0, -1, -2626.0, math.nan, math.inf])
def test_it_rejects_throughput_that_is_not_positive_and_finite(throughput):
    with pytest.raises(CostInputError) as caught:
        deployment_usd_per_mtok(1.48, 8, throughput)
    assert caught.value.field == "tok_per_s"


@pytest.mark.parametrize("gpus", [0, -8, 2.5, True])
def test_it_rejects_a_gpu_count_that_is_not_a_positive_whole_number(gpus):
    with pytest.raises(CostInputError) as caught:
        deployment_usd_per_mtok(1.48, gpus, 2626)
    assert caught.value.field == "gpus"


def test_it_rejects_a_negative_price():
    with pytest.raises(CostInputError) as caught:
        usd_per_mtok(-1.48, 100)
    assert caught.value.field == "usd_per_gpu_hour"
    assert "negative" in caught.value.message


def test_it_prices_each_token_kind_and_the_3_to_1_blend():
    # 2 GPUs at $2/h = $4/h. Input 2,000 tok/s = 7.2 Mtok/h; output 500 tok/s = 1.8 Mtok/h.
    costs = mtok_costs(2.0, Throughput(gpus=2, input_tok_per_s=2000, output_tok_per_s=500))
    assert costs.input == pytest.approx(4 / 7.2)
    assert costs.output == pytest.approx(4 / 1.8)
    assert costs.total == pytest.approx(4 / 9.0)
    assert costs.blended == pytest.approx((3 * (4 / 7.2) + 4 / 1.8) / 4)
    assert costs.cached_input is None


def test_the_user_can_set_the_blend_mix():
    costs = mtok_costs(
        2.0,
        Throughput(gpus=2, input_tok_per_s=2000, output_tok_per_s=500),
        mix=TokenMix(input_weight=1, output_weight=1),
    )
    assert costs.blended == pytest.approx((4 / 7.2 + 4 / 1.8) / 2)


def test_cached_input_tokens_priced_apart_leave_the_rest_to_uncached_ones():
    # Input costs 4/7.2 = 0.5556 $/Mtok. 60% cached at $0.10: uncached pay
    # (0.5556 - 0.6 * 0.10) / 0.4 = 1.2389 $/Mtok.
    costs = mtok_costs(
        2.0,
        Throughput(gpus=2, input_tok_per_s=2000, output_tok_per_s=500, cached_input_share=0.6),
        cached_input_usd_per_mtok=0.10,
    )
    assert costs.cached_input == pytest.approx(0.10)
    assert costs.uncached_input == pytest.approx((4 / 7.2 - 0.06) / 0.4)
    assert costs.uncached_input == pytest.approx(1.2389, abs=1e-4)


def test_a_cached_price_above_the_whole_input_cost_is_refused():
    with pytest.raises(CostInputError) as caught:
        mtok_costs(
            2.0,
            Throughput(gpus=2, input_tok_per_s=2000, output_tok_per_s=500, cached_input_share=0.6),
            cached_input_usd_per_mtok=5.0,
        )
    assert caught.value.field == "cached_input_usd_per_mtok"


def test_an_all_zero_mix_is_refused():
    with pytest.raises(CostInputError) as caught:
        blended_usd_per_mtok(1.0, 2.0, TokenMix(0, 0))
    assert caught.value.field == "mix"


def test_a_price_sheet_blend_is_the_weighted_mean():
    assert blended_usd_per_mtok(1.0, 5.0) == pytest.approx(2.0)


def test_tier_prices_come_from_the_reference_book():
    assert tier_usd_per_gpu_hour(AUGUST_2025, "MI355X", "owning_hyperscaler") == 1.48
    assert tier_usd_per_gpu_hour(AUGUST_2025, "b200", "rental_3yr") == 2.90


def test_an_unknown_accelerator_names_the_field():
    with pytest.raises(CostInputError) as caught:
        tier_usd_per_gpu_hour(AUGUST_2025, "TPU9", "rental_3yr")
    assert caught.value.field == "accelerator"
    assert "TPU9" in caught.value.message


def test_an_unknown_tier_names_the_field():
    with pytest.raises(CostInputError) as caught:
        tier_usd_per_gpu_hour(AUGUST_2025, "B200", "spot")
    assert caught.value.field == "tier"
    assert "rental_3yr" in caught.value.message


def test_a_missing_tier_or_accelerator_is_required():
    with pytest.raises(CostInputError) as caught:
        tier_usd_per_gpu_hour(AUGUST_2025, "", "rental_3yr")
    assert (caught.value.field, caught.value.message) == ("accelerator", "is required")
    with pytest.raises(CostInputError) as caught:
        tier_usd_per_gpu_hour(AUGUST_2025, "B200", "")
    assert (caught.value.field, caught.value.message) == ("tier", "is required")


def test_a_tier_price_says_where_it_came_from():
    price = tier_price(AUGUST_2025, "mi355x", "owning_hyperscaler")
    assert (price.accelerator, price.usd_per_gpu_hour) == ("MI355X", 1.48)
    assert price.source == "reference tier"
    # The dated set that stated it, and where its source is.
    assert price.citation.startswith("semianalysis-2025-08: SemiAnalysis Market August 2025")
    assert "constants.ts @77ca49a" in price.citation


def test_the_reference_book_matches_the_published_figures():
    published = json.loads((FIXTURES / "published.json").read_text())
    for row in published["accelerators"]:
        book = AUGUST_2025[row["sku"]]
        assert book.all_in_kw == row["all_in_kw"]
        for tier in Tier:
            assert book.usd_per_gpu_hour[tier.value] == row["usd_per_gpu_hr"][tier.value]
    assert set(AUGUST_2025) == {row["sku"] for row in published["accelerators"]}


def test_capex_and_opex_build_a_gpu_hour_price():
    # $30,000 GPU + $10,000 server share over 4 years = 40,000 / 35,040 h = $1.14155/h.
    # Power 2 kW x PUE 1.25 x $0.10/kWh = $0.25/h. Hosting $73/month = $0.10/h.
    # At 80% utilization: (1.14155 + 0.25 + 0.10) / 0.8 = $1.86444/h.
    cost = capex_opex_usd_per_gpu_hour(
        CapexOpex(
            gpu_purchase_usd=30_000,
            server_share_usd=10_000,
            depreciation_years=4,
            kw_per_gpu=2.0,
            usd_per_kwh=0.10,
            pue=1.25,
            hosting_usd_per_month=73,
            utilization=0.8,
        )
    )
    assert cost.depreciation == pytest.approx(40_000 / 35_040)
    assert cost.power == pytest.approx(0.25)
    assert cost.hosting == pytest.approx(0.10)
    assert cost.usd_per_gpu_hour == pytest.approx((40_000 / 35_040 + 0.35) / 0.8)
    assert cost.usd_per_gpu_hour == pytest.approx(1.86444, abs=1e-5)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("depreciation_years", 0),
        ("utilization", 0),
        ("utilization", 1.5),
        ("pue", 0.9),
        ("usd_per_kwh", -0.1),
        ("gpu_purchase_usd", math.nan),
    ],
)
def test_capex_opex_rejects_impossible_inputs_by_field(field, value):
    inputs = {
        "gpu_purchase_usd": 30_000,
        "server_share_usd": 10_000,
        "depreciation_years": 4,
        "kw_per_gpu": 2.0,
        "usd_per_kwh": 0.10,
        field: value,
    }
    with pytest.raises(CostInputError) as caught:
        capex_opex_usd_per_gpu_hour(CapexOpex(**inputs))
    assert caught.value.field == field


def test_energy_per_token_for_the_seed_deployment():
    # 8 x 2.65 kW = 21,200 W over 2,626 tok/s = 8.0731 J/tok.
    assert joules_per_token(2.65, 8, 2626) == pytest.approx(21_200 / 2626)
    assert joules_per_token(2.65, 8, 2626) == pytest.approx(8.0731, abs=1e-4)


def test_a_megawatt_buys_throughput_in_proportion():
    # 1 MW / 21.2 kW = 47.17 deployments x 2,626 tok/s = 123,868 tok/s.
    assert tok_per_s_per_mw(2.65, 8, 2626) == pytest.approx(2626 * 1000 / 21.2)


def test_energy_needs_positive_power():
    with pytest.raises(CostInputError) as caught:
        joules_per_token(0, 8, 2626)
    assert caught.value.field == "kw_per_gpu"


def test_the_users_own_price_wins_over_a_tier():
    price = choose_price(AUGUST_2025, usd_per_gpu_hour=1.0, accelerator="B200", tier="x")
    assert (price.usd_per_gpu_hour, price.tier, price.source) == (1.0, "own", USER_PRICE_SOURCE)


def test_without_a_price_it_takes_the_tier_and_says_so():
    price = choose_price(AUGUST_2025, accelerator="B200", tier="owning_neocloud")
    assert price.usd_per_gpu_hour == 2.34


def test_without_any_price_it_asks_for_one():
    with pytest.raises(CostInputError) as caught:
        choose_price(AUGUST_2025)
    assert caught.value.field == "usd_per_gpu_hour"
    with pytest.raises(CostInputError) as caught:
        choose_price(AUGUST_2025, accelerator="B200")
    assert caught.value.field == "tier"


def test_a_cost_that_would_overflow_is_refused_not_inf():
    with pytest.raises(CostInputError) as caught:
        usd_per_mtok(1e308, 1e-300)
    assert caught.value.field == "tok_per_s"
