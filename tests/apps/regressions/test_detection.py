"""The change-point method on synthetic series: shifts of known size and place, noise taken
from InferenceX's repeated runs of one configuration (bench/change_points.py prints the same
figures over more series)."""

from __future__ import annotations

import json
import math
import statistics
from collections import defaultdict

import numpy as np
import pytest

from apps.catalog.reference import INFERENCEX_DIR
from apps.regressions import detection


@pytest.fixture(scope="module")
def real_sigma() -> float:
    """The median noise (log scale) of throughput per GPU over InferenceX configurations
    with at least 5 dated runs."""
    series = defaultdict(list)
    for row in json.loads((INFERENCEX_DIR / "benchmarks-history.json").read_text()):
        value = row["metrics"].get("tput_per_gpu")
        key = tuple(row[k] for k in ("hardware", "framework", "precision", "isl", "osl", "conc"))
        key += (row["decode_tp"], row["decode_ep"], row["disagg"], row["spec_method"])
        if value:
            series[key].append((row["date"], value))
    sigmas = [
        detection.noise_sigma(np.log([v for _, v in sorted(points)]))
        for points in series.values()
        if len(points) >= 5
    ]
    return statistics.median(sigmas)


def test_three_sigma_shifts_are_found_near_their_place_and_clean_series_stay_quiet(real_sigma):
    rng = np.random.default_rng(1)
    length, trials = 30, 400
    found = false = 0
    for _ in range(trials):
        place = int(rng.integers(2, length - 1))
        x = rng.normal(0, real_sigma, length)
        x[place:] += rng.choice([-1.0, 1.0]) * 3 * real_sigma
        changes = detection.find_changes(list(np.exp(x) * 500))
        found += any(abs(c.index - place) <= 2 for c in changes)
        false += len(detection.find_changes(list(np.exp(rng.normal(0, real_sigma, length)))))
    assert found / trials >= 0.95
    assert false / (trials * length) <= 0.01


def test_a_change_carries_its_size_interval_and_significance():
    values = [100.0, 101.0, 99.5, 100.5, 99.0, 100.0, 80.0, 81.0, 79.5, 80.5, 80.0]
    (change,) = detection.find_changes(values)
    assert change.index == 6
    assert change.relative == pytest.approx(-0.2, abs=0.01)
    assert change.low < change.relative < change.high < 0
    assert change.p_value < detection.ALPHA
    assert change.before == pytest.approx(100, rel=0.01)
    assert change.after == pytest.approx(80.2, rel=0.01)


def test_a_flat_series_and_a_single_outlier_make_no_change_point():
    assert detection.find_changes([1.0] * 12, log_scale=False) == []
    assert detection.find_changes([100.0, 101, 99, 100, 60, 100, 101, 99, 100, 100]) == []
    # Too short to hold two points each side.
    assert detection.find_changes([100.0, 50.0, 50.0]) == []


def test_a_success_rate_is_judged_on_its_own_scale():
    (change,) = detection.find_changes([1.0] * 6 + [0.9] * 6, log_scale=False)
    assert change.relative == pytest.approx(-0.1)
    assert math.isclose(change.before, 1.0) and math.isclose(change.after, 0.9)


def test_the_persistence_rule_needs_the_change_to_hold_for_enough_recent_points():
    values = [100.0] * 6 + [80.0, 81.0, 79.0]
    (change,) = detection.find_changes(values)
    assert detection.persists(values, change, needed=2, window=3)
    # The last point went back: 2 of the last 3 still hold, 3 of 3 do not.
    undone = [*values, 100.0]
    assert detection.persists(undone, change, needed=2, window=3)
    assert not detection.persists(undone, change, needed=3, window=3)
