"""The workload in the buyer's units, each conversion shown, and why an SLO is not met."""

from __future__ import annotations

import pytest

from apps.costs.procurement import cost_of_latency, procurement_rows
from apps.costs.slo import Slo, SloPoint, explain_miss
from tests.apps.costs.books import AUGUST_2025
from tests.apps.costs.test_procurement import B200, MI355X, curve, parse_inputs

SHAPE = {"input_tokens": "20000", "output_tokens": "1000", "peak_to_average": "2"}


def test_tokens_per_day_become_requests_per_day_and_each_step_is_shown():
    inputs, errors = parse_inputs(
        SHAPE | {"workload_unit": "tokens_per_day", "tokens_per_day": "2,000,000,000"}
    )
    assert errors == []
    assert inputs.workload.requests_per_day == pytest.approx(2e9 / 21_000)
    assert inputs.conversions[0] == (
        "2,000,000,000 tokens/day ÷ (20,000 input + 1,000 output) tokens/request "
        "= 95,238 requests/day"
    )
    assert "= 2.205 requests/s at peak" in inputs.conversions[1]
    assert inputs.conversions[2].endswith("= 2,646 output tok/s to size for")


def test_input_and_output_tokens_per_day_that_disagree_are_sized_for_the_larger():
    inputs, errors = parse_inputs(
        SHAPE
        | {
            "workload_unit": "io_tokens_per_day",
            "input_tokens_per_day": "1e9",  # 50,000 requests
            "output_tokens_per_day": "1e8",  # 100,000 requests
        }
    )
    assert errors == []
    assert inputs.workload.requests_per_day == pytest.approx(100_000)
    assert "sized for the larger, 100,000 requests/day" in inputs.conversions[1]


def test_requests_per_second_at_peak_are_sized_as_given():
    inputs, errors = parse_inputs(
        SHAPE | {"workload_unit": "peak_requests_per_s", "peak_requests_per_s": "3"}
    )
    assert errors == []
    assert inputs.workload.peak_requests_per_s == 3
    assert inputs.workload.requests_per_day is None


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"workload_unit": "tokens_per_day"}, "tokens_per_day"),
        ({"workload_unit": "tokens_per_day", "tokens_per_day": "0"}, "tokens_per_day"),
        ({"workload_unit": "furlongs"}, "workload_unit"),
        ({"min_success_pct": "120"}, "min_success_pct"),
    ],
)
def test_a_bad_workload_names_its_field(params, field):
    inputs, errors = parse_inputs(SHAPE | params)
    assert inputs is None
    assert field in {error.field for error in errors}


def test_a_percentile_the_data_lacks_is_named():
    points = [SloPoint("c1", 100, {"ttft_s.p50": 0.2, "ttft_s.p90": 0.4}, 1.0)]
    miss = explain_miss(points, Slo.of(ttft_s_max=2, ttft_percentile="p99"))
    assert miss.unstated == ("TTFT p99 (it states p50, p90)",)
    assert miss.nearest is None


def test_an_unreported_success_rate_is_named_and_the_nearest_slo_asks_none():
    points = [SloPoint("c1", 100, {"ttft_s.p99": 1.5}, None)]
    miss = explain_miss(points, Slo.of(ttft_s_max=2))
    assert miss.unstated == ("success rate (the SLO needs ≥ 99%)",)
    assert miss.failing == ()
    assert miss.relaxed == Slo.of(ttft_s_max=2, min_success_rate=0.0)


def test_a_success_rate_of_zero_prices_points_that_do_not_report_it():
    unreported = curve(3, "MI355X", [SloPoint("c1", 500, {"ttft_s.p99": 0.5}, None)])
    base = {"ttft_s_max": "2", "input_tokens": "1000", "output_tokens": "1000"}
    strict, _ = parse_inputs(base | {"token_kind": "total"})
    lax, _ = parse_inputs(base | {"token_kind": "total", "min_success_pct": "0"})
    (missed,) = procurement_rows([unreported], strict, AUGUST_2025)
    (priced,) = procurement_rows([unreported], lax, AUGUST_2025)
    assert not missed.ok and "success rate" in missed.problem
    assert missed.relaxed_plan.gpus == priced.plan.gpus  # the nearest SLO it meets, priced
    assert priced.ok


def test_the_cheapest_row_per_accelerator_is_called_out():
    inputs, _ = parse_inputs(
        {"ttft_s_max": "2.22", "input_tokens": "1000", "output_tokens": "1000"}
        | {"token_kind": "total", "cache_hit_rate": "0"}
    )
    slower_b200 = curve(5, "B200", [SloPoint("c1", 100, {"ttft_s.p99": 0.3}, 1.0)])
    rows = procurement_rows([MI355X, B200, slower_b200], inputs, AUGUST_2025)
    best = {row.curve.run_id for row in rows if row.best_for_accelerator}
    assert best == {MI355X.run_id, B200.run_id}
    cheapest = rows[0]
    assert cheapest.usd_per_request == pytest.approx(
        cheapest.plan.usd_per_month / (1_000_000 / 86_400 * 3600 * 730)
    )


def test_the_cost_of_latency_falls_as_the_ttft_bound_loosens_per_accelerator():
    inputs, _ = parse_inputs(
        {"ttft_s_max": "2.22", "input_tokens": "1000", "output_tokens": "1000"}
        | {"token_kind": "total", "cache_hit_rate": "0"}
    )
    rows = procurement_rows([MI355X, B200], inputs, AUGUST_2025)
    series = cost_of_latency(rows, inputs)
    assert set(series) == {"MI355X", "B200"}
    for points in series.values():
        limits = [limit for limit, _ in points]
        months = [usd for _, usd in points]
        assert limits == sorted(limits)
        assert months == sorted(months, reverse=True)
    # MI355X's lightest point has TTFT 0.5 s: no tighter bound is priced for it.
    assert min(limit for limit, _ in series["MI355X"]) >= 0.5
    # Past its heaviest point (2.0 s) MI355X costs what its best point costs at the SLO.
    mi = next(row for row in rows if row.curve.accelerator == "MI355X")
    assert series["MI355X"][-1][1] == mi.plan.usd_per_month


def test_a_length_mix_is_sized_on_its_mean_request_and_says_so():
    inputs, errors = parse_inputs(
        SHAPE | {"length_mix": "20000/1000:0.75, 1k-1k:0.25", "requests_per_day": "1000"},
        shapes={"1k-1k": (1024.0, 1024.0)},
    )
    assert errors == []
    assert inputs.workload.input_tokens == pytest.approx(0.75 * 20_000 + 0.25 * 1024)
    assert inputs.workload.output_tokens == pytest.approx(0.75 * 1000 + 0.25 * 1024)
    assert inputs.conversions[0] == (
        "length mix 75% × (20,000 in / 1,000 out) + 25% × (1,024 in / 1,024 out, 1k-1k) "
        "= 15,256 in / 1,006 out per request on average"
    )


@pytest.mark.parametrize("mix", ["20000/1000:lots", "long:1", "20000/0:1", "20000/1000:-1", ","])
def test_a_bad_length_mix_names_the_field(mix):
    inputs, errors = parse_inputs(SHAPE | {"length_mix": mix})
    assert inputs is None
    assert [error.field for error in errors] == ["length_mix"]


def test_token_prices_the_buyer_sells_at_give_revenue_and_margin():
    inputs, errors = parse_inputs(
        {"ttft_s_max": "2.22", "input_tokens": "1000", "output_tokens": "1000"}
        | {"token_kind": "total", "cache_hit_rate": "0.5", "requests_per_day": "86400"}
        | {"sell_input_usd_per_mtok": "0.5", "sell_cached_input_usd_per_mtok": "0.1"}
        | {"sell_output_usd_per_mtok": "2"}
    )
    assert errors == []
    (row, _) = procurement_rows([MI355X, B200], inputs, AUGUST_2025)
    # One request a second on average, 730 h: 2,628,000 requests, each 500 uncached and
    # 500 cached input tokens and 1,000 output tokens.
    per_request = (500 * 0.5 + 500 * 0.1 + 1000 * 2) / 1e6
    assert row.revenue_per_month == pytest.approx(per_request * 2_628_000)
    assert row.margin_per_month == pytest.approx(row.revenue_per_month - row.plan.usd_per_month)


def test_a_disaggregated_deployment_counts_both_pools_in_each_replica():
    inputs, _ = parse_inputs(
        {"input_tokens": "1000", "output_tokens": "1000", "token_kind": "total"}
        | {"cache_hit_rate": "0", "requests_per_day": "10000000"}
    )
    disaggregated = curve(
        7,
        "GB200",
        [SloPoint("c64", 900, {"ttft_s.p99": 1.0}, 1.0)],
        gpus=32,
        prefill_gpus=8,
        decode_gpus=24,
    )
    (row,) = procurement_rows([disaggregated], inputs, AUGUST_2025)
    assert row.plan.gpus % 32 == 0 and row.plan.gpus == row.plan.replicas * (8 + 24)
