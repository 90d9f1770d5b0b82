"""Capacity planning: GPUs, nodes and $/month for a workload."""

from __future__ import annotations

import pytest

from apps.costs.capacity import (
    Candidate,
    ScenarioShape,
    Workload,
    plan_capacity,
    rank_plans,
    workload_load,
)
from apps.costs.formulas import CostInputError, TokenKind

SHAPE = ScenarioShape(input_tokens=1000, output_tokens=1000, cache_hit_rate=0.0)


def candidate(label: str = "A", tput: float | None = 100.0, price: float = 2.0, **kw) -> Candidate:
    fields = {
        "label": label,
        "accelerator": "B200",
        "tok_per_s_per_gpu": tput,
        "token_kind": TokenKind.OUTPUT,
        "gpus_per_replica": 8,
        "gpus_per_node": 8,
        "usd_per_gpu_hour": price,
        "scenario": SHAPE,
    } | kw
    return Candidate(**fields)


WORKLOAD = Workload(
    input_tokens=1000, output_tokens=1000, peak_requests_per_s=10, peak_to_average=2, headroom=0.2
)


def test_it_sizes_for_the_peak_with_headroom():
    # 100 output tok/s/GPU / 1000 tokens = 0.1 req/s/GPU. Peak 10 x 1.2 = 12 req/s
    # -> 120 GPUs = 15 replicas of 8 on 15 nodes; 120 x $2 x 730 h = $175,200/month.
    plan = plan_capacity(WORKLOAD, candidate())
    assert plan.feasible
    assert plan.requests_per_s_per_gpu == pytest.approx(0.1)
    assert (plan.replicas, plan.gpus, plan.nodes) == (15, 120, 15)
    assert plan.usd_per_month == pytest.approx(175_200)
    assert plan.peak_utilization == pytest.approx(10 / 12)
    assert plan.warnings == ()


def test_cost_per_served_mtok_uses_the_average_load():
    # Average 10 / 2 = 5 req/s x 2,000 tokens x 3600 x 730 = 26,280 Mtok/month.
    plan = plan_capacity(WORKLOAD, candidate())
    assert plan.usd_per_mtok_served == pytest.approx(175_200 / 26_280)


def test_it_rounds_up_to_whole_replicas_and_nodes():
    # 12 req/s / 0.1 = 120 GPUs; replicas of 16 -> 8 replicas = 128 GPUs on 16 nodes of 8.
    plan = plan_capacity(WORKLOAD, candidate(gpus_per_replica=16))
    assert (plan.replicas, plan.gpus, plan.nodes) == (8, 128, 16)


def test_a_daily_volume_becomes_a_peak_through_the_peak_factor():
    load = workload_load(
        Workload(input_tokens=1, output_tokens=1, requests_per_day=864_000, peak_to_average=3)
    )
    assert load.average_requests_per_s == pytest.approx(10)
    assert load.peak_requests_per_s == pytest.approx(30)


def test_total_token_throughput_counts_input_and_output_per_request():
    # 2000 total tok/s/GPU over 2,000 tokens/request = 1 req/s/GPU.
    plan = plan_capacity(WORKLOAD, candidate(tput=2000.0, token_kind=TokenKind.TOTAL))
    assert plan.requests_per_s_per_gpu == pytest.approx(1.0)
    assert plan.gpus == 16  # 12 GPUs needed, 2 replicas of 8


def test_the_cheapest_plan_ranks_first_and_infeasible_ones_last():
    plans = rank_plans(
        WORKLOAD,
        [
            candidate("slow-cheap", tput=50.0, price=1.0),  # 240 GPUs x $1
            candidate("cannot", tput=None, note="no measured point meets TTFT p99 <= 2 s"),
            candidate("fast-dear", tput=100.0, price=3.0),  # 120 GPUs x $3
            candidate("fast-cheap", tput=100.0, price=1.5),  # 120 GPUs x $1.5
        ],
    )
    assert [p.candidate.label for p in plans] == ["fast-cheap", "slow-cheap", "fast-dear", "cannot"]
    assert not plans[-1].feasible
    assert plans[-1].reason == "no measured point meets TTFT p99 <= 2 s"
    assert plans[-1].usd_per_month is None


def test_it_warns_when_the_measured_scenario_differs_from_the_workload():
    shape = ScenarioShape(input_tokens=20_000, output_tokens=1000, cache_hit_rate=0.6)
    plan = plan_capacity(WORKLOAD, candidate(scenario=shape, throughput_provenance="interpolated"))
    assert any("20000 input tokens" in warning for warning in plan.warnings)
    assert any("60% prefix-cache" in warning for warning in plan.warnings)
    assert any("interpolated" in warning for warning in plan.warnings)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"peak_requests_per_s": 0}, "peak_requests_per_s"),
        ({"peak_requests_per_s": None}, "requests_per_day"),
        ({"requests_per_day": 5}, "requests_per_day"),  # both given
        ({"peak_to_average": 0.5}, "peak_to_average"),
        ({"cache_hit_rate": 1.5}, "cache_hit_rate"),
        ({"output_tokens": -1}, "output_tokens"),
    ],
)
def test_a_bad_workload_is_refused_by_field(changes, field):
    fields = {
        "input_tokens": 1000,
        "output_tokens": 1000,
        "peak_requests_per_s": 10,
    } | changes
    with pytest.raises(CostInputError) as caught:
        plan_capacity(Workload(**fields), candidate())
    assert caught.value.field == field


def test_zero_throughput_is_refused():
    with pytest.raises(CostInputError) as caught:
        plan_capacity(WORKLOAD, candidate(tput=0.0))
    assert caught.value.field == "tok_per_s_per_gpu"


def test_a_load_too_large_to_plan_for_is_refused_not_inf():
    huge = Workload(input_tokens=1000, output_tokens=1000, requests_per_day=1e308)
    with pytest.raises(CostInputError) as caught:
        plan_capacity(huge, candidate(tput=1e-3))
    assert caught.value.field == "requests_per_day"
