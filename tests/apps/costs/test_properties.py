"""Property tests: the cost model moves the right way whatever the numbers."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from apps.costs.capacity import Candidate, ScenarioShape, Workload, plan_capacity
from apps.costs.formulas import TokenKind, usd_per_mtok
from apps.costs.slo import Slo, SloPoint, best_throughput_at_slo

prices = st.floats(min_value=0.01, max_value=100.0, allow_nan=False, allow_infinity=False)
throughputs = st.floats(min_value=0.1, max_value=1e6, allow_nan=False, allow_infinity=False)
factors = st.floats(min_value=1.001, max_value=100.0)


@given(price=prices, tput=throughputs, factor=factors)
def test_cost_per_mtok_rises_with_price(price, tput, factor):
    assert usd_per_mtok(price * factor, tput) > usd_per_mtok(price, tput)


@given(price=prices, tput=throughputs, factor=factors)
def test_cost_per_mtok_falls_with_throughput(price, tput, factor):
    assert usd_per_mtok(price, tput * factor) < usd_per_mtok(price, tput)


@st.composite
def sweeps(draw):
    """Load sweeps with arbitrary (not necessarily tidy) measured points."""
    size = draw(st.integers(min_value=1, max_value=8))
    metric = st.floats(min_value=0.01, max_value=100.0)
    return [
        SloPoint(
            f"p{i}",
            draw(throughputs),
            {"ttft_s.p99": draw(metric), "interactivity.p50": draw(metric)},
            draw(st.sampled_from([1.0, 0.995, 0.7])),
        )
        for i in range(size)
    ]


@settings(max_examples=300)
@given(
    points=sweeps(),
    ttft=st.floats(min_value=0.01, max_value=100.0),
    inter=st.floats(min_value=0.01, max_value=100.0),
)
def test_interpolated_throughput_stays_between_its_measured_neighbours(points, ttft, inter):
    slo = Slo.of(ttft_s_max=ttft, interactivity_min=inter)
    result = best_throughput_at_slo(points, slo)
    measured = [p.tok_per_s_per_gpu for p in points]
    if not result.meets:
        assert not any(
            p.metrics["ttft_s.p99"] <= ttft
            and p.metrics["interactivity.p50"] >= inter
            and p.success_rate >= 0.99
            for p in points
        )
        return
    best_meeting = max(
        p.tok_per_s_per_gpu
        for p in points
        if p.metrics["ttft_s.p99"] <= ttft
        and p.metrics["interactivity.p50"] >= inter
        and p.success_rate >= 0.99
    )
    assert result.tok_per_s_per_gpu >= best_meeting
    assert result.tok_per_s_per_gpu <= max(measured)
    if result.provenance == "interpolated":
        low, high = result.lower.tok_per_s_per_gpu, result.upper.tok_per_s_per_gpu
        assert low <= result.tok_per_s_per_gpu <= high
        # The interpolated point itself meets the SLO (within float rounding).
        assert result.metrics["ttft_s.p99"] <= ttft * (1 + 1e-9)
        assert result.metrics["interactivity.p50"] >= inter * (1 - 1e-9)
    else:
        assert result.tok_per_s_per_gpu == best_meeting


@given(
    peak=st.floats(min_value=0.01, max_value=1e4),
    factor=factors,
    # Up to 1.2e6 req/s at 1,000 tokens each over >= 10 tok/s/GPU stays under MAX_GPUS.
    tput=st.floats(min_value=10.0, max_value=1e6),
    replica=st.sampled_from([1, 2, 4, 8, 16]),
)
def test_capacity_never_falls_as_load_rises(peak, factor, tput, replica):
    candidate = Candidate(
        label="x",
        accelerator="B200",
        tok_per_s_per_gpu=tput,
        token_kind=TokenKind.OUTPUT,
        gpus_per_replica=replica,
        gpus_per_node=8,
        usd_per_gpu_hour=2.0,
        scenario=ScenarioShape(1000, 1000, 0.0),
    )

    def plan(rate: float):
        workload = Workload(input_tokens=1000, output_tokens=1000, peak_requests_per_s=rate)
        return plan_capacity(workload, candidate)

    low, high = plan(peak), plan(peak * factor)
    assert high.gpus >= low.gpus
    assert high.nodes >= low.nodes
    assert high.usd_per_month >= low.usd_per_month


@settings(max_examples=300)
@given(
    points=sweeps(),
    ttft=st.floats(min_value=0.01, max_value=100.0),
    looser=st.floats(min_value=1.0, max_value=10.0),
    inter=st.floats(min_value=0.01, max_value=100.0),
)
def test_loosening_the_slo_never_lowers_the_throughput(points, ttft, looser, inter):
    tight = best_throughput_at_slo(points, Slo.of(ttft_s_max=ttft, interactivity_min=inter))
    loose = best_throughput_at_slo(
        points, Slo.of(ttft_s_max=ttft * looser, interactivity_min=inter / looser)
    )
    if tight.meets:
        assert loose.meets
        assert loose.tok_per_s_per_gpu >= tight.tok_per_s_per_gpu * (1 - 1e-12)


extreme = st.floats(min_value=1e-320, max_value=1e308, allow_nan=False, allow_infinity=False)


@given(price=extreme, tput=extreme, gpus=st.integers(min_value=1, max_value=100_000))
def test_cost_is_finite_or_a_named_error_never_inf(price, tput, gpus):
    from apps.costs.formulas import CostInputError, deployment_usd_per_mtok

    try:
        cost = deployment_usd_per_mtok(price, gpus, tput)
    except CostInputError as error:
        assert error.field in {"tok_per_s", "usd_per_gpu_hour"}
    else:
        assert math.isfinite(cost) and cost >= 0


@given(ratio=extreme, price_a=extreme, price_b=extreme, claimed=extreme)
def test_claim_checks_are_finite_or_a_named_error(ratio, price_a, price_b, claimed):
    from apps.costs.claims import Claim, check_claim
    from apps.costs.formulas import CostInputError

    try:
        check = check_claim(Claim(ratio, price_a, price_b, claimed))
    except CostInputError as error:
        assert error.field in {"throughput_ratio", "claimed_cost_ratio"}
    else:
        values = (check.cost_ratio, check.throughput_ratio_needed, check.usd_per_gpu_hour_a_needed)
        assert all(math.isfinite(v) for v in values)
