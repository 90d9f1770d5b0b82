"""The conformal band keeps its promise, and the nested evaluation never lets a held-out
accelerator (or, across vendors, a held-out vendor) into its own fold's fits, choices or
bands."""

import math

import numpy as np
import pytest

from apps.projections import conformal, nested, reference, validation
from apps.projections.pointmodels import CANDIDATES


def test_split_conformal_quantiles_give_the_promised_coverage_on_synthetic_errors():
    rng = np.random.default_rng(7)
    covered = []
    for _ in range(400):
        calibration = np.abs(rng.lognormal(0, 0.5, size=50) - 1)
        new = np.abs(rng.lognormal(0, 0.5) - 1)
        covered.append(new <= conformal.conformal_quantile(calibration, 0.8))
    # finite-sample promise: at least 80% (and at most 80% + 1/(n+1) on average)
    assert 0.78 <= np.mean(covered) <= 0.86


def test_too_few_scores_give_no_band_rather_than_a_narrow_one():
    assert conformal.conformal_quantile([0.1, 0.2, 0.3], 0.8) == math.inf
    assert conformal.conformal_quantile([0.1, 0.2, 0.3, 0.4], 0.8) == 0.4


def test_pooled_bands_hold_the_promised_share_of_new_points():
    rng = np.random.default_rng(3)
    covered = total = 0
    for _ in range(300):
        # each group has its own bias: points are not exchangeable across groups; the
        # promise is kept over the points of new groups like the calibration's
        groups = [(g, rng.normal(0, 0.3), rng.normal(0, 0.2, size=40)) for g in "abcdef"]
        scored = [(g, abs(b + e)) for g, b, errs in groups[:5] for e in errs]
        q = conformal.pooled_quantile(scored, 0.8)
        _, bias, errs = groups[5]
        covered += int(np.sum(np.abs(bias + errs) <= q))
        total += len(errs)
    assert 0.76 <= covered / total <= 0.86


def test_every_point_weighs_the_same_whatever_its_group():
    # one big group of small errors, two small groups of large ones
    scored = [("big", 0.1)] * 1000 + [("a", 1.0)] * 10 + [("b", 1.0)] * 10
    # pooled, the 80th percentile of the 1,020 points is a small error
    assert conformal.pooled_quantile(scored, 0.8) == 0.1


def test_too_few_groups_give_no_band():
    scored = [("a", 0.1)] * 50 + [("b", 0.2)] * 50 + [("c", 0.3)] * 4  # c: too few points
    assert conformal.pooled_quantile(scored, 0.8) == math.inf


def test_extrapolated_band_is_never_narrower_than_seen():
    inner = [(g, "seen", 0.5) for g in "abcde" for _ in range(6)]
    outside = [(g, 0.1) for g in "abcde" for _ in range(6)]
    bands = conformal.stratum_bands(inner, outside)
    assert bands["extrapolated"].high >= bands["seen"].high
    assert bands["seen"].width == bands["seen"].high / bands["seen"].low


def test_the_extrapolated_band_reads_family_out_errors_only_where_too_few_extrapolate():
    seen = [(g, "seen", 0.1) for g in "abcde" for _ in range(6)]
    outside = [(g, 2.0) for g in "abcde" for _ in range(20)]
    three = seen + [(g, "extrapolated", 0.3) for g in "abc" for _ in range(6)]
    assert conformal.stratum_bands(three, outside)["extrapolated"].q == pytest.approx(0.3)
    two = seen + [(g, "extrapolated", 0.3) for g in "ab" for _ in range(6)]
    assert conformal.stratum_bands(two, outside)["extrapolated"].q == pytest.approx(2.0)


def _trial(held_top: float) -> conformal.Trial:
    # one level down: three accelerators' errors spread evenly over (0, 1]; the one left
    # out errs evenly over (0, held_top]
    inner = [(g, "seen", i / 100) for g in "abc" for i in range(1, 101)]
    held = [("seen", held_top * i / 100) for i in range(1, 101)]
    return conformal.Trial(inner=inner, outside=[], held=held)


def test_the_level_is_lowered_where_the_bands_one_level_down_over_cover():
    trials = [_trial(0.9)] * 3
    levels = conformal.calibrated_levels(trials, 0.8)
    assert levels["seen"] < 0.8
    # the lowest level whose bands hold the target share of the points left out
    goal = round(0.8 + conformal.LEVEL_TARGET, 6)
    q = conformal.stratum_bands(trials[0].inner, [], levels=levels)["seen"].q
    assert np.mean([score <= q for _, score in trials[0].held]) >= goal
    lower = {"seen": round(levels["seen"] - 0.01, 2)}
    q = conformal.stratum_bands(trials[0].inner, [], levels=lower)["seen"].q
    assert np.mean([score <= q for _, score in trials[0].held]) < goal
    # the band keeps its promise in its label
    assert conformal.stratum_bands(trials[0].inner, [], levels=levels)["seen"].coverage == 0.8


def test_the_level_is_raised_where_the_bands_one_level_down_under_cover():
    levels = conformal.calibrated_levels([_trial(1.5)] * 3, 0.8)
    assert levels["seen"] == conformal.LEVELS[-1]


def test_trials_without_a_band_one_level_down_leave_the_promised_level():
    few = conformal.Trial(
        inner=[(g, "seen", 0.1) for g in "ab" for _ in range(20)],  # two accelerators
        outside=[],
        held=[("seen", 0.05)] * 20,
    )
    assert conformal.calibrated_levels([few] * 3, 0.8) == {"seen": 0.8, "extrapolated": 0.8}
    # no extrapolated point was left out: that stratum keeps the promise too
    assert conformal.calibrated_levels([_trial(0.9)] * 3, 0.8)["extrapolated"] == 0.8


def _small_shipped_set():
    per_sku: dict[str, list] = {}
    observations, _ = reference.calibration_set()
    for obs in observations:
        if obs.accel.sku in ("B200", "H200", "MI300X", "MI325X") and obs.engine == "sglang":
            per_sku.setdefault(obs.accel.sku, []).append(obs)
    return [o for found in per_sku.values() for o in found[:12]]


# issue 44's roofline and the per-phase roofline with transfer
SMALL_CANDIDATES = [CANDIDATES[0], CANDIDATES[2]]
assert SMALL_CANDIDATES[1].transfer is not None


def test_the_held_out_accelerator_enters_no_fit_choice_or_band_of_its_fold():
    observations = _small_shipped_set()
    current: list[str] = []
    calls: list[tuple[str, set[str]]] = []

    def recording_fit(candidate, train):
        calls.append((current[-1], {o.accel.sku for o in train}))
        return candidate.fit(train)

    folds = nested.nested_leave_one_accelerator_out(
        observations, candidates=SMALL_CANDIDATES, fit=recording_fit, on_fold=current.append
    )
    assert [f.sku for f in folds] == ["B200", "H200", "MI300X", "MI325X"]
    assert {fold for fold, _ in calls} == {"B200", "H200", "MI300X", "MI325X"}
    for fold, train_skus in calls:
        assert fold not in train_skus
    for f in folds:
        assert f.selection.inner and all(p.sku != f.sku for p in f.selection.inner)
        # the extrapolated band's errors: every calibration accelerator projected with its
        # whole family out, so each is an extrapolation, and the held-out one is none of them
        outside = f.selection.outside
        assert outside and all(p.sku != f.sku for p in outside)
        assert {p.stratum for p in outside} == {"extrapolated"}
        assert all(p.point.sku == f.sku for p in f.points)


def test_across_vendors_every_fit_sees_only_the_other_vendor():
    observations = _small_shipped_set()
    seen: list[set[str]] = []

    def recording_fit(candidate, train):
        seen.append({o.accel.vendor for o in train})
        return candidate.fit(train)

    folds = nested.cross_vendor(observations, candidates=SMALL_CANDIDATES, fit=recording_fit)
    assert [f.sku for f in folds] == ["NVIDIA -> AMD", "AMD -> NVIDIA"]
    assert seen and all(len(vendors) == 1 for vendors in seen)
    for f in folds:
        target = f.sku.split(" -> ")[1]
        assert {p.point.vendor for p in f.points} == {target}
        # nothing of the target vendor's family was seen: every point extrapolates
        assert {p.point.stratum for p in f.points} == {"extrapolated"}


def test_cookbook_cells_with_speculative_decoding_are_counted_out_and_queues_marked():
    kept, skipped = validation.observations_from_cookbook(
        reference.glm52_cookbook(),
        architectures=reference.architectures(),
        accelerators=reference.accelerators(),
    )
    assert skipped["speculative decoding"] > 0
    assert kept and all(o.arch.name == "GLM 5.2" for o in kept)
    # a level above --max-running-requests runs the limit at once; its TTFT is queueing
    queued = [o for o in kept if o.ttft_queued]
    assert queued and all(o.concurrency <= 512 for o in queued)
    # sglang's --moe-a2a-backend spreads the experts over the TP group (B200 FP8's
    # high-throughput cell passes it; NVFP4's does not)
    dp_attention = {o.precision_name: o.layout.ep for o in kept if o.layout.dp_attention}
    assert dp_attention == {"fp8": 8, "nvfp4": 1}
    assert all(o.date == "2026-07-06" for o in kept)


def test_leaving_a_family_out_leaves_its_sibling_accelerators_out_of_the_fit():
    observations, _ = reference.calibration_set()
    chosen = [
        o for o in observations if o.accel.sku in ("B200", "B300", "H200") and o.engine == "sglang"
    ]
    seen: list[set[str]] = []

    def recording_fit(candidate, train):
        seen.append({o.accel.sku for o in train})
        return candidate.fit(train)

    validation.leave_one_accelerator_out(
        chosen, CANDIDATES[0], only=["B200"], fit=recording_fit, without_family=True
    )
    assert seen and all(skus == {"H200"} for skus in seen)


def test_the_choice_weighs_each_held_out_accelerator_the_same():
    def point(sku: str, error: float | None) -> validation.HeldOutPoint:
        projected = None if error is None else 100 * (1 + error / 100)
        return validation.HeldOutPoint(
            sku=sku,
            engine="e",
            precision="fp8",
            scenario="1k/1k",
            concurrency=4,
            interactivity=50,
            measured=100,
            projected=projected,
            projected_at_concurrency=100 * (1 + (error or 0) / 100),
            model="m",
            curve_distance=0.1,
            stratum="seen",
        )

    # many good points of one accelerator cannot outvote a few bad ones of another; an
    # unreached point counts as the cap
    points = [point("A", 0.0)] * 100 + [point("B", 40.0)] * 3 + [point("C", None)] * 3
    expected = np.mean([0.0, 40.0, (nested.SCORE_CAP_PCT + 0) / 2])
    assert nested.inner_score(points) == expected
