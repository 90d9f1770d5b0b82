"""Paired comparison of stored accuracy results."""

from __future__ import annotations

import pytest

from workers.accuracy.compare import NotComparable, compare_results, item_outcomes
from workers.results import AccuracyItem, AccuracyResult


def result(outcomes: dict[str, bool | str], protocol_hash: str = "sha256:p1") -> AccuracyResult:
    """outcomes: item id -> True / False, or a failure class."""
    items = [
        AccuracyItem(item_id=item_id, correct=o, failure=None)
        if isinstance(o, bool)
        else AccuracyItem(item_id=item_id, correct=None, failure=o)
        for item_id, o in outcomes.items()
    ]
    scored = [o for o in outcomes.values() if o not in ("transport_error", "http_error")]
    correct = sum(1 for o in scored if o is True)
    return AccuracyResult(
        protocol="gsm8k-5shot-v1",
        protocol_hash=protocol_hash,
        task="gsm8k",
        metric="exact_match_numeric",
        n=len(scored),
        correct=correct,
        score=correct / len(scored),
        items=items,
    )


def test_infrastructure_failures_are_unpaired_and_model_failures_count_as_wrong() -> None:
    outcomes = item_outcomes(result({"a": True, "b": "truncated", "c": "transport_error"}))
    assert outcomes == {"a": True, "b": False}


def test_two_runs_of_one_protocol_give_a_verdict_with_flipped_items() -> None:
    ids = [f"q{i}" for i in range(200)]
    baseline = result(dict.fromkeys(ids, True))
    candidate = result({i: i not in ("q3", "q7") for i in ids} | {"q9": "no_answer"})
    comparison = compare_results(baseline, candidate, 5.0, "BF16", "MXFP4")
    assert comparison.lost_ids == ["q3", "q7", "q9"]
    assert comparison.gained_ids == []
    assert comparison.difference == pytest.approx(-3 / 200)
    assert comparison.verdict_text.startswith("MXFP4 is within 5 points of BF16")
    # Three flips in 200 items cannot show a 2-point margin: an honest "inconclusive".
    assert compare_results(baseline, candidate, 2.0).verdict == "inconclusive"


def test_results_of_different_protocols_are_not_paired() -> None:
    with pytest.raises(NotComparable, match="protocols differ"):
        compare_results(result({"a": True}), result({"a": True}, "sha256:p2"), 1.0)


def test_a_result_without_items_cannot_be_paired() -> None:
    bare = result({"a": True}).model_copy(update={"items": None})
    with pytest.raises(NotComparable, match="no per-item records"):
        compare_results(bare, bare, 1.0)


def test_an_aa_pair_supplies_the_noise_floor() -> None:
    ids = [f"q{i}" for i in range(100)]
    first = result(dict.fromkeys(ids, True))
    second = result({i: i != "q5" for i in ids})
    candidate = result({i: i not in ("q1", "q2") for i in ids})
    comparison = compare_results(first, candidate, 5.0, aa=(first, second))
    assert comparison.noise_floor is not None
    assert (comparison.noise_floor.discordant, comparison.noise_floor.flipped_ids) == (1, ["q5"])
    assert "A/A noise floor: 1 of 100 items" in comparison.verdict_text


def test_gpqa_repeat_ids_are_grouped_by_question() -> None:
    baseline = result({f"rec{q}:r{r}": True for q in range(20) for r in range(4)})
    candidate = result({f"rec{q}:r{r}": q >= 3 for q in range(20) for r in range(4)})
    assert compare_results(baseline, candidate, 1.0).design_effect > 1.0
    gsm = result({f"gsm8k-test-{i}": True for i in range(80)})
    gsm_candidate = result({f"gsm8k-test-{i}": i >= 12 for i in range(80)})
    assert compare_results(gsm, gsm_candidate, 1.0).design_effect == 1.0
