"""The named SLO tiers (apps/catalog/slo_tiers.py): one definition, each bound with its reason."""

from types import SimpleNamespace

import pytest

from apps.catalog import slo_tiers
from workers import slo as slo_rule

EIGHT_K = SimpleNamespace(input_tokens=8192)
ONE_K = SimpleNamespace(input_tokens=1024)


def test_the_default_tier_is_interactive_with_a_floor_and_a_ttft_p99_ceiling():
    tier = slo_tiers.default_tier(EIGHT_K)
    assert tier.name == slo_tiers.INTERACTIVE
    floor, ceiling = tier.bound("interactivity"), tier.bound("ttft")
    assert (floor.percentile, floor.limit, floor.unit) == ("p50", 30.0, "tok/s/user")
    assert (ceiling.percentile, ceiling.unit) == ("p99", "s")
    assert tier.slo.min_success_rate == 0.99


def test_a_long_prompt_gets_a_longer_ttft_ceiling_than_a_short_one():
    long = slo_tiers.scenario_tier(EIGHT_K, "interactive").bound("ttft").limit
    short = slo_tiers.scenario_tier(ONE_K, "interactive").bound("ttft").limit
    assert (short, long) == (1.5, 4.5)
    # A prompt of unstated length (a multi-turn session's context grows) is treated as long.
    assert slo_tiers.scenario_tier(None, "standard").bound("ttft").limit == 6.0
    assert slo_tiers.scenario_tier(ONE_K, "standard").bound("ttft").limit == 2.0


def test_each_bound_states_why_it_is_where_it_is():
    for scenario in (EIGHT_K, ONE_K):
        for tier in slo_tiers.scenario_tiers(scenario):
            reasons = tier.reasons()
            assert len(reasons) == len(tier.bounds) + 1
            for reason, reasoned in zip(reasons, tier.bounds, strict=False):
                assert reason.startswith(reasoned.bound.describe())
                assert "MLPerf" in reasoned.why


def test_throughput_only_says_it_bounds_no_latency_and_judges_nothing():
    tier = slo_tiers.scenario_tier(EIGHT_K, "throughput")
    assert tier.describe() == "throughput-only tier: bounds no latency"
    assert not tier.slo.any
    assert "bounds no latency" in tier.reasons()[0]


def test_an_unknown_tier_names_the_field_and_the_tiers():
    with pytest.raises(slo_rule.SloError) as refused:
        slo_tiers.scenario_tier(EIGHT_K, "fast")
    assert refused.value.field == "slo"
    assert "interactive, standard, throughput" in refused.value.message


def test_the_tier_describes_itself_as_the_one_slo_rule_does():
    tier = slo_tiers.default_tier(EIGHT_K)
    assert tier.describe() == (
        "interactive tier: TTFT p99 ≤ 4.5 s, interactivity p50 ≥ 30 tok/s/user, success ≥ 99%"
    )
    assert tier.as_dict()["bounds"][0] == {
        "metric": "ttft",
        "percentile": "p99",
        "limit": 4.5,
        "unit": "s",
        "why": tier.bounds[0].why,
    }
