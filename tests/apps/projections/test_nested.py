"""The conformal band keeps its promise, and the nested evaluation never lets a held-out
accelerator into its own fold's fits, choices or bands."""

import math

import numpy as np

from apps.projections import conformal, nested, reference, selectors, validation
from apps.projections.model import calibrate


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


def test_clustered_bands_hold_most_of_a_new_group():
    rng = np.random.default_rng(3)
    covered = []
    for _ in range(200):
        # each group has its own bias: points within a group are not exchangeable across
        groups = [(g, rng.normal(0, 0.3), rng.normal(0, 0.2, size=30)) for g in "abcdef"]
        scored = [(g, "seen", abs(b + e)) for g, b, errs in groups[:5] for e in errs]
        q = conformal.clustered_bands(scored, coverage=0.8)["seen"].q
        _, bias, errs = groups[5]
        covered.append(np.mean(np.abs(bias + errs) <= q) >= 0.8)
    assert np.mean(covered) >= 0.78


def test_extrapolated_band_is_never_narrower():
    scored = [(g, "seen", 0.5) for g in "abcde" for _ in range(6)]
    scored += [(g, "extrapolated", 0.1) for g in "abcde" for _ in range(6)]
    bands = conformal.clustered_bands(scored)
    assert bands["extrapolated"].high >= bands["seen"].high


def _small_shipped_set():
    per_sku: dict[str, list] = {}
    for obs in selectors.inferencex_observations():
        if obs.accel.sku in ("B200", "H200", "MI300X") and obs.engine == "sglang":
            per_sku.setdefault(obs.accel.sku, []).append(obs)
    return [o for found in per_sku.values() for o in found[:12]]


def test_the_held_out_accelerator_enters_no_fit_choice_or_band_of_its_fold():
    observations = _small_shipped_set()
    current: list[str] = []
    calls: list[tuple[str, set[str]]] = []

    def recording_fit(train, **kwargs):
        calls.append((current[-1], {o.accel.sku for o in train}))
        return calibrate(train, **kwargs)

    folds = nested.nested_leave_one_accelerator_out(
        observations,
        candidates=[
            nested.Candidate("family-first", False),
            nested.Candidate("engine-first", True),
        ],
        fit=recording_fit,
        on_fold=current.append,
    )
    assert [f.sku for f in folds] == ["B200", "H200", "MI300X"]
    assert {fold for fold, _ in calls} == {"B200", "H200", "MI300X"}
    for fold, train_skus in calls:
        assert fold not in train_skus
    for f in folds:
        assert f.inner and all(p.sku != f.sku for p in f.inner)
        # the extrapolated band's errors: every calibration accelerator projected with its
        # whole family out, so each is an extrapolation, and the held-out one is none of them
        assert f.outside and all(p.sku != f.sku for p in f.outside)
        assert {p.stratum for p in f.outside} == {"extrapolated"}
        assert all(p.point.sku == f.sku for p in f.points)


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


def test_leaving_a_family_out_leaves_its_sibling_accelerators_out_of_the_fit():
    observations = [
        o
        for o in selectors.inferencex_observations()
        if o.accel.sku in ("B200", "B300", "H200") and o.engine == "sglang"
    ]
    seen: list[set[str]] = []

    def recording_fit(train, **kwargs):
        seen.append({o.accel.sku for o in train})
        return calibrate(train, **kwargs)

    validation.leave_one_accelerator_out(
        observations, only=["B200"], fit=recording_fit, without_family=True
    )
    assert seen and all(skus == {"H200"} for skus in seen)
