"""Statistics against published values and the defining equations."""

from __future__ import annotations

import math

import pytest

from workers.accuracy.stats import (
    Z95,
    clustered_score,
    compare,
    detectable_difference,
    mcnemar_exact_p,
    newcombe_paired,
    noise_floor,
    wilson,
    wilson_fraction,
)


def test_the_wilson_interval_for_1273_of_1319() -> None:
    interval = wilson(1273, 1319)
    assert interval.low == pytest.approx(0.95380, abs=5e-5)
    assert interval.high == pytest.approx(0.97375, abs=5e-5)


def test_wilson_bounds_solve_the_score_equation() -> None:
    # Each bound p satisfies (x/n - p)^2 = z^2 p (1 - p) / n.
    x, n = 1273, 1319
    for p in (wilson(x, n).low, wilson(x, n).high):
        assert (x / n - p) ** 2 == pytest.approx(Z95**2 * p * (1 - p) / n, rel=1e-9)


def test_wilson_at_zero_and_all_correct_stays_inside_zero_and_one() -> None:
    assert wilson(0, 10).low == 0.0
    assert wilson(0, 10).high == pytest.approx(Z95**2 / (10 + Z95**2))
    assert wilson(10, 10).high == 1.0
    assert (wilson(0, 0).low, wilson(0, 0).high) == (0.0, 1.0)


def test_wilson_refuses_more_correct_than_items() -> None:
    with pytest.raises(ValueError, match="between 0 and n"):
        wilson(11, 10)


def test_exact_mcnemar_for_discordant_20_and_7() -> None:
    p = mcnemar_exact_p(20, 7)
    assert p == pytest.approx(0.019, abs=5e-4)
    # 2 * P(X <= 7) for X ~ Binomial(27, 1/2), summed independently here.
    assert p == pytest.approx(2 * sum(math.comb(27, i) for i in range(8)) / 2**27)
    assert mcnemar_exact_p(7, 20) == p


def test_exact_mcnemar_matches_the_textbook_example() -> None:
    # Fagerland, Lydersen & Laake, paired 2x2 table of Cavo et al. (2012): 59, 6, 16, 80.
    assert mcnemar_exact_p(6, 16) == pytest.approx(0.052479, abs=5e-7)


def test_exact_mcnemar_without_discordant_pairs_is_one() -> None:
    assert mcnemar_exact_p(0, 0) == 1.0
    assert mcnemar_exact_p(1000, 1000) == 1.0


def test_the_paired_interval_matches_newcombes_method_on_the_textbook_example() -> None:
    # Candidate right / baseline wrong = 6, the reverse = 16: difference -10/161.
    interval = newcombe_paired(both=59, only_baseline=16, only_candidate=6, neither=80)
    assert interval.low == pytest.approx(-0.1186, abs=5e-5)
    assert interval.high == pytest.approx(-0.0046, abs=5e-5)


def outcomes(both: int, lost: int, gained: int, neither: int) -> tuple[dict, dict]:
    """Baseline and candidate outcomes with the given cell counts, ids in a fixed order."""
    baseline: dict[str, bool] = {}
    candidate: dict[str, bool] = {}
    cells = [
        (both, True, True),
        (lost, True, False),
        (gained, False, True),
        (neither, False, False),
    ]
    i = 0
    for count, a, b in cells:
        for _ in range(count):
            baseline[f"q{i:04d}"], candidate[f"q{i:04d}"] = a, b
            i += 1
    return baseline, candidate


def test_a_paired_comparison_reports_cells_flips_and_the_difference() -> None:
    baseline, candidate = outcomes(both=1250, lost=20, gained=7, neither=42)
    result = compare(baseline, candidate, margin_points=2.0)
    assert (result.n, result.both, result.only_baseline, result.only_candidate) == (
        1319,
        1250,
        20,
        7,
    )
    assert result.difference == pytest.approx(-13 / 1319)
    assert result.mcnemar_p == pytest.approx(mcnemar_exact_p(20, 7))
    assert result.lost_ids == [f"q{i:04d}" for i in range(1250, 1270)]
    assert result.gained_ids == [f"q{i:04d}" for i in range(1270, 1277)]
    assert result.interval.low < result.difference < result.interval.high


def test_a_small_loss_is_within_a_wide_margin() -> None:
    baseline, candidate = outcomes(both=1250, lost=20, gained=7, neither=42)
    result = compare(baseline, candidate, 2.0, "BF16", "MXFP4")
    assert result.verdict == "within"
    assert result.verdict_text.startswith("MXFP4 is within 2 points of BF16")


def test_a_tight_margin_is_inconclusive_and_says_what_could_be_detected() -> None:
    baseline, candidate = outcomes(both=1250, lost=20, gained=7, neither=42)
    result = compare(baseline, candidate, 1.5)
    assert result.verdict == "inconclusive"
    # (1.96 + 0.84) * sqrt(27 / 1319) / sqrt(1319) = 1.10 points
    assert result.detectable == pytest.approx(detectable_difference(27, 1319))
    assert "smallest detectable difference is 1.1 points" in result.verdict_text


def test_a_large_loss_is_worse_and_a_large_gain_better() -> None:
    baseline, candidate = outcomes(both=1100, lost=150, gained=10, neither=59)
    assert compare(baseline, candidate, 1.0).verdict == "worse"
    assert compare(candidate, baseline, 1.0).verdict == "better"


def test_items_scored_by_only_one_run_are_left_out_and_counted() -> None:
    baseline, candidate = outcomes(both=10, lost=0, gained=0, neither=0)
    baseline["only-a"] = True
    candidate["only-b"] = False
    result = compare(baseline, candidate, 1.0)
    assert (result.n, result.unpaired) == (10, 2)


def test_runs_with_nothing_in_common_are_inconclusive() -> None:
    result = compare({"a": True}, {"b": True}, 1.0)
    assert result.verdict == "inconclusive"
    assert "share no scored items" in result.verdict_text


def test_an_aa_noise_floor_counts_flips_between_identical_deployments() -> None:
    first, second = outcomes(both=90, lost=3, gained=2, neither=5)
    floor = noise_floor(first, second)
    assert (floor.n, floor.discordant, floor.rate) == (100, 5, 0.05)
    assert len(floor.flipped_ids) == 5
    assert floor.points == pytest.approx(100 * Z95 * math.sqrt(0.05 / 100))
    baseline, candidate = outcomes(both=80, lost=10, gained=5, neither=5)
    text = compare(baseline, candidate, 1.0, aa=floor).verdict_text
    assert "A/A noise floor: 5 of 100 items (5.0%)" in text


def test_a_negative_margin_is_refused() -> None:
    with pytest.raises(ValueError, match="margin"):
        compare({}, {}, -1.0)


def test_the_verdict_reads_as_non_inferiority() -> None:
    # Eight gains and two losses in 200: the interval reaches past +1 point but not below -1.
    baseline, candidate = outcomes(both=150, lost=2, gained=8, neither=40)
    result = compare(baseline, candidate, 1.0)
    assert result.interval.low >= -0.01 and result.interval.high > 0.01
    assert result.verdict == "within"


def test_repeats_that_always_agree_count_as_one_item_each() -> None:
    # 100 questions x 4 repeats, every question all right or all wrong: about 100 items' worth.
    score = clustered_score([(4, 4)] * 60 + [(0, 4)] * 40)
    assert (score.n, score.correct) == (400, 240)
    assert score.effective_n == pytest.approx(99.0)  # Q - 1 from the small-sample factor
    assert score.interval == wilson_fraction(0.6, 99.0)
    assert score.interval.high - score.interval.low > wilson(240, 400).high - wilson(240, 400).low


def test_repeats_that_vary_within_questions_keep_the_item_count() -> None:
    score = clustered_score([(2, 4)] * 100)
    assert score.effective_n == 400
    assert score.interval == wilson(200, 400)
    assert score.stderr == pytest.approx(math.sqrt(0.25 / 400))


def test_one_item_per_question_is_the_plain_wilson_interval() -> None:
    score = clustered_score([(1, 1)] * 1273 + [(0, 1)] * 46)
    assert score.interval == wilson(1273, 1319)
    assert score.stderr == pytest.approx(math.sqrt(1273 / 1319 * 46 / 1319 / 1319))


def repeated(flipped_questions: int, flips_per_question: int) -> tuple[dict, dict]:
    """50 questions x 4 repeats; the baseline gets all right, the candidate loses some."""
    baseline = {f"q{q}:r{r}": True for q in range(50) for r in range(4)}
    candidate = {
        f"q{q}:r{r}": not (q < flipped_questions and r < flips_per_question)
        for q in range(50)
        for r in range(4)
    }
    return baseline, candidate


def question(item_id: str) -> str:
    return item_id.split(":")[0]


def test_repeats_that_flip_together_widen_the_paired_interval() -> None:
    baseline, candidate = repeated(flipped_questions=10, flips_per_question=4)
    plain = compare(baseline, candidate, 1.0)
    clustered = compare(baseline, candidate, 1.0, cluster_of=question)
    # 10 of 50 questions lose all 4 repeats: design effect 50/49 * 4.
    assert clustered.design_effect == pytest.approx(50 / 49 * 4)
    assert clustered.difference == plain.difference == pytest.approx(-0.2)
    ratio = math.sqrt(clustered.design_effect)
    assert plain.difference - clustered.interval.low == pytest.approx(
        (plain.difference - plain.interval.low) * ratio
    )
    assert clustered.detectable == pytest.approx(plain.detectable * ratio)


def test_flips_spread_over_questions_leave_the_interval_alone() -> None:
    baseline, candidate = repeated(flipped_questions=40, flips_per_question=1)
    clustered = compare(baseline, candidate, 1.0, cluster_of=question)
    assert clustered.design_effect == 1.0
    assert clustered.interval == compare(baseline, candidate, 1.0).interval
