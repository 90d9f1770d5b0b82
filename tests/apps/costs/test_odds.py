"""P(A is cheaper than B) (apps/costs/odds.py) on synthetic sides of known spread, against an
exact enumeration of the bootstrap and a closed form of the price draw, within Monte Carlo
error (seeded); and, with one measurement a side, no probability at all. No database."""

import itertools
import math
from dataclasses import replace

import numpy as np
import pytest

from apps.costs.answer import Facts, answer
from apps.costs.odds import (
    PriceRange,
    PriceScenario,
    answer_odds,
    cheaper_odds,
    price_scenarios,
)
from apps.costs.reference import price_set, price_sets
from tests.apps.costs.test_answer import REPEATED, _point, _records, _slo

# A: three runs of its configuration at one level; B: two. tok/s/GPU as measured.
RUNS_A = [100.0, 112.0, 131.0]
RUNS_B = [95.0, 121.0]
SCENARIOS = [
    PriceScenario("cheap A", 1.0, 1.2),
    PriceScenario("dear A", 1.5, 1.2),
    PriceScenario("close", 1.2, 1.1),
]


def _exact(runs_a, runs_b, scenarios) -> float:
    """The odds under the bootstrap, by brute force: every ordered resample of each side's
    runs (n^n of them, equally likely), each price scenario equally likely."""
    total = 0.0
    for scenario in scenarios:
        wins = 0.0
        draws_a = list(itertools.product(runs_a, repeat=len(runs_a)))
        draws_b = list(itertools.product(runs_b, repeat=len(runs_b)))
        for draw_a in draws_a:
            cost_a = scenario.usd_a / (sum(draw_a) / len(draw_a))
            for draw_b in draws_b:
                cost_b = scenario.usd_b / (sum(draw_b) / len(draw_b))
                wins += 1.0 if cost_a < cost_b else 0.5 if cost_a == cost_b else 0.0
        total += wins / (len(draws_a) * len(draws_b))
    return total / len(scenarios)


def test_the_odds_match_an_exact_enumeration_of_the_bootstrap_within_monte_carlo_error():
    exact = _exact(RUNS_A, RUNS_B, SCENARIOS)
    assert 0.2 < exact < 0.8  # a case where both outcomes are likely, so the check can fail
    draws = 20_000
    odds = cheaper_odds(RUNS_A, RUNS_B, SCENARIOS, basis="output", draws=draws, seed=11)
    error = math.sqrt(exact * (1 - exact) / draws)
    assert abs(odds.probability - exact) < 4 * error
    assert odds.standard_error == pytest.approx(error, rel=0.05)
    assert (odds.runs_a, odds.runs_b, odds.draws) == (3, 2, draws)
    # Another seed gives another draw within the same error: the seed fixes, it does not fit.
    other = cheaper_odds(RUNS_A, RUNS_B, SCENARIOS, basis="output", draws=draws, seed=12)
    assert abs(other.probability - exact) < 4 * error
    assert other.probability != odds.probability


def _uniform_closed_form(a: tuple[float, float], b: tuple[float, float], c: float) -> float:
    """P(X < c·Y) for X ~ U(a), Y ~ U(b) independent: the integral over y of
    P(X < c·y) = clip((c·y - a0) / (a1 - a0), 0, 1), piecewise linear in y, so the trapezoid
    rule between its breakpoints is exact."""
    (a0, a1), (b0, b1) = a, b
    knots = sorted({b0, b1, *(k for k in (a0 / c, a1 / c) if b0 < k < b1)})

    def cdf(y: float) -> float:
        return min(max((c * y - a0) / (a1 - a0), 0.0), 1.0)

    area = sum((y1 - y0) * (cdf(y0) + cdf(y1)) / 2 for y0, y1 in itertools.pairwise(knots))
    return area / (b1 - b0)


def test_the_odds_over_a_users_price_range_match_the_closed_form():
    # Repeated runs of identical figures: a throughput with no spread, so only prices vary.
    tok_a, tok_b = 120.0, 100.0
    prices = PriceRange(a=(1.3, 1.9), b=(1.2, 1.6))
    # A cheaper: X / tok_a < Y / tok_b, i.e. X < (tok_a / tok_b) Y.
    exact = _uniform_closed_form(prices.a, prices.b, tok_a / tok_b)
    draws = 20_000
    odds = cheaper_odds([tok_a] * 3, [tok_b] * 2, prices, basis="output", draws=draws)
    assert abs(odds.probability - exact) < 4 * math.sqrt(exact * (1 - exact) / draws)
    assert "drawn uniformly" in odds.prices


def test_with_one_measurement_a_side_it_states_no_probability_and_says_why():
    odds = cheaper_odds([120.0], [100.0], SCENARIOS, basis="output")
    assert odds.probability is None and odds.standard_error is None
    (note,) = odds.notes
    assert note.startswith("one measurement per side: no run-to-run spread")
    # What the prices alone do at the figures, counted, not called a probability.
    assert "A is cheaper under 2 of 3 price scenarios" in note
    assert "not stated" in odds.sentence("MI355X", "B200")


def test_a_side_with_one_run_is_taken_at_its_figure_and_said_to_be():
    odds = cheaper_odds(RUNS_A, [110.0], SCENARIOS, basis="output", draws=2000)
    assert odds.probability is not None
    assert any(n.startswith("B: one run without request records") for n in odds.notes)


def test_request_records_give_a_single_run_its_spread():
    rng = np.random.default_rng(3)
    fast, slow = _records(rng, 100), _records(rng, 104)
    odds = cheaper_odds(
        [fast], [slow], [PriceScenario("same", 1.0, 1.0)], basis="output", draws=2000
    )
    assert (odds.requests_a, odds.requests_b) == (400, 400)
    # 4% apart in latency per request with 400 requests a side: likely, not certain.
    assert 0.5 < odds.probability < 1.0
    assert odds.notes == ()


def test_the_default_prices_are_every_tier_of_every_set_up_to_the_date():
    sets = price_sets()
    newest = price_scenarios("MI355X", "B200", as_of=price_set(), sets=sets)
    august = price_scenarios("MI355X", "B200", as_of=price_set("2025-09-01"), sets=sets)
    # August 2025 alone: its three tiers. Every later set's tiers add the pairs it changed
    # (the power-only correction adds none; the rental set's neocloud is July's).
    assert [s.label for s in august] == [
        "semianalysis-2025-08 owning_hyperscaler",
        "semianalysis-2025-08 owning_neocloud",
        "semianalysis-2025-08 rental_3yr",
    ]
    assert (august[0].usd_a, august[0].usd_b) == (1.48, 1.95)
    assert [s.label for s in newest] == [
        "semianalysis-2026-07-rental owning_hyperscaler",
        "semianalysis-2026-07 owning_neocloud",
        "semianalysis-2026-07-rental rental_3yr",
        "semianalysis-2026-07 owning_hyperscaler",
        "semianalysis-2026-07 rental_3yr",
        *(s.label for s in august),
    ]
    fixed = price_scenarios("MI355X", "B200", as_of=price_set(), sets=sets, own={"mi355x": 1.0})
    assert {s.usd_a for s in fixed} == {1.0}


def test_beside_the_answer_it_resamples_the_runs_at_each_sides_level():
    result = answer(REPEATED, a="MI355X", b="B200", facts=Facts(), slo=_slo())
    odds = answer_odds(result, {}, SCENARIOS, basis="output")
    assert (odds.runs_a, odds.runs_b) == (3, 1)
    assert odds.probability is not None
    single = answer(
        [_point("MI355X", 1, 4, 100, 90, 1.0), _point("B200", 2, 4, 90, 90, 1.0)],
        a="MI355X",
        b="B200",
        facts=Facts(),
        slo=_slo(),
    )
    assert answer_odds(single, {}, SCENARIOS, basis="output").probability is None
    unpriced = replace(single, usd_ratio=None)
    assert answer_odds(unpriced, {}, SCENARIOS, basis="output") is None
