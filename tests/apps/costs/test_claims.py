"""Claim checks: the computed cost ratio and the assumptions that would make a claim true."""

from __future__ import annotations

import pytest

from apps.costs.claims import (
    Assumption,
    Claim,
    Comparison,
    answer_assumptions,
    check_claim,
    cost_ratio,
    tier_pair_assumptions,
    what_differs,
)
from apps.costs.formulas import CostInputError
from tests.apps.costs.books import AUGUST_2025

SEED_CLAIM = Claim(
    throughput_ratio=0.80,
    usd_per_gpu_hour_a=1.48,
    usd_per_gpu_hour_b=1.95,
    claimed_cost_ratio=0.5,
    comparison=Comparison.BELOW,
    label_a="MI355X",
    label_b="B200",
)


def test_80_percent_throughput_at_1_48_vs_1_95_is_a_cost_ratio_of_0_95():
    # (1.48 / 1.95) / 0.80 = 0.758974 / 0.80 = 0.948718.
    assert cost_ratio(0.80, 1.48, 1.95) == pytest.approx(0.948718, abs=1e-6)
    assert round(cost_ratio(0.80, 1.48, 1.95), 2) == 0.95


def test_under_half_the_cost_does_not_hold_at_the_stated_figures():
    check = check_claim(SEED_CLAIM)
    assert not check.holds
    assert check.cost_ratio == pytest.approx(0.948718, abs=1e-6)
    assert check.summary() == "(1.48/1.95)/0.8 = 0.95: the claim < 0.5 does not hold"


def test_it_says_what_throughput_or_price_would_make_the_claim_true():
    check = check_claim(SEED_CLAIM)
    # 0.758974 / 0.5 = 1.5179: A would need 1.52x B's throughput, not 0.8x.
    assert check.throughput_ratio_needed == pytest.approx(1.517949, abs=1e-6)
    # 0.5 x 0.8 x 1.95 = $0.78/GPU-hr for A.
    assert check.usd_per_gpu_hour_a_needed == pytest.approx(0.78)


def test_no_reference_tier_pairing_makes_under_half_true_at_80_percent():
    # Best case for A: MI355X owning hyperscaler 1.48 vs B200 rental 2.90:
    # (1.48 / 2.90) / 0.8 = 0.638, still above 0.5.
    tiers = tier_pair_assumptions(AUGUST_2025, "MI355X", "B200", 0.80)
    check = check_claim(SEED_CLAIM, tiers)
    assert len(check.verdicts) == 9
    assert check.assumptions_that_hold == ()
    assert min(v.cost_ratio for v in check.verdicts) == pytest.approx((1.48 / 2.90) / 0.8)


def test_a_stored_run_pairing_with_more_throughput_can_make_it_true():
    # FP4 on A against FP16 on B might give A 1.6x B's throughput: 0.759 / 1.6 = 0.474.
    fp4_vs_fp16 = Assumption("MXFP4 vs BF16 runs", "quantization pairing", 1.6, 1.48, 1.95)
    check = check_claim(SEED_CLAIM, [fp4_vs_fp16])
    assert check.verdicts[0].holds
    assert check.verdicts[0].cost_ratio == pytest.approx((1.48 / 1.95) / 1.6)


def test_an_about_claim_holds_within_five_percent():
    about = Claim(0.80, 1.48, 1.95, claimed_cost_ratio=0.95, comparison=Comparison.ABOUT)
    assert check_claim(about).holds
    far = Claim(0.80, 1.48, 1.95, claimed_cost_ratio=0.8, comparison=Comparison.ABOUT)
    assert not check_claim(far).holds


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ((0.0, 1.48, 1.95), "throughput_ratio"),
        ((0.8, -1.0, 1.95), "usd_per_gpu_hour_a"),
        ((0.8, 1.48, 0.0), "usd_per_gpu_hour_b"),
    ],
)
def test_bad_claim_numbers_are_refused_by_field(args, field):
    with pytest.raises(CostInputError) as caught:
        cost_ratio(*args)
    assert caught.value.field == field


def test_a_bad_assumption_names_its_position():
    bad = Assumption("broken", "stored run", 0.0, 1.0, 1.0)
    with pytest.raises(CostInputError) as caught:
        check_claim(SEED_CLAIM, [bad])
    assert caught.value.field == "assumptions[0].throughput_ratio"


def test_it_lists_what_differs_next_to_a_comparison():
    a = {"quantization": "MXFP4", "engine": "sglang 0.5", "scenario": "20k/1k/60%"}
    b = {"quantization": "BF16", "engine": "sglang 0.5", "scenario": "20k/1k/60%", "tier": "x"}
    diffs = what_differs(a, b)
    assert [(d.field, d.a, d.b) for d in diffs] == [
        ("quantization", "MXFP4", "BF16"),
        ("tier", None, "x"),
    ]


def test_stored_runs_give_the_answers_ratio_with_what_still_differs():
    from dataclasses import replace

    from apps.costs.answer import Facts, answer
    from apps.costs.slo import Slo
    from tests.apps.costs.test_answer import _point

    points = [
        _point("MI355X", 1, 16, 1600.0, 40, 1.0, precision="mxfp4"),
        _point("B200", 2, 16, 2000.0, 40, 1.0, precision="fp8"),
        _point("B200", 3, 64, 4000.0, 10, 1.0, precision="fp8"),  # misses the floor
    ]
    slo = Slo.of(interactivity_min=30, min_success_rate=0.0)
    result = answer(points, a="MI355X", b="B200", facts=Facts(), slo=slo)
    missing = replace(result, b=replace(result.b, point=None))
    assumptions = answer_assumptions([result, result, missing], 1.48, 1.95)
    # Once (the same two points twice are one reading), and none from a side without one.
    [stored] = assumptions
    assert stored.throughput_ratio == 0.8  # 1,600 / 2,000: c=64 misses the floor
    assert stored.differences == ("precision: mxfp4 / fp8",)
    assert stored.kind.startswith("stored runs (the answer at the SLO")
    check = check_claim(SEED_CLAIM, assumptions)
    assert [v.holds for v in check.verdicts] == [False]  # (1.48 / 1.95) / 0.8 = 0.95
