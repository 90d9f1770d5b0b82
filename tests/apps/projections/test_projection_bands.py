"""Pages draw the shipped calibration's 80% band (apps/projections/reference/calibration.json),
for the projected accelerator and its extrapolation class, and say which matching it uses."""

import copy
import math

import numpy as np
import pytest

from apps.projections import calibration, reference, selectors
from apps.projections.model import Shape


def _projection() -> dict:
    return selectors.glm_b200_projection(single_stream_tok_s=213, shape=Shape(20_000, 1_000, 0.6))


def _shipped_q(matching: str, stratum: str = "extrapolated") -> float:
    return reference.calibration_data()["accelerators"]["B200"]["q"][matching][stratum]


def test_the_glm_b200_projection_takes_b200s_extrapolated_band_from_the_artifact():
    projection = _projection()
    checked = projection["validation"]
    # GLM 5.2 in FP4 is in none of the calibration's Blackwell runs: an extrapolation
    assert checked.sku == "B200" and checked.stratum == "extrapolated"
    assert checked.band_along_curve.q == pytest.approx(_shipped_q("interactivity"))
    q = _shipped_q("concurrency")
    assert projection["band"] == pytest.approx((math.exp(-q), math.exp(q)))
    for p in projection["series"]["B200"]["points"]:
        assert p["low"] == pytest.approx(p["output_tput_per_gpu"] * math.exp(-q))
        assert p["high"] == pytest.approx(p["output_tput_per_gpu"] * math.exp(q))


def test_pages_follow_the_artifact_not_a_band_of_their_own(monkeypatch):
    data = copy.deepcopy(reference.calibration_data())
    data["accelerators"]["B200"]["q"]["interactivity"]["extrapolated"] = 0.25
    data["accelerators"]["B200"]["q"]["concurrency"]["extrapolated"] = 0.125
    monkeypatch.setattr(selectors, "shipped_calibration", lambda: calibration.Calibration(data))
    projection = _projection()
    assert projection["band"] == pytest.approx((math.exp(-0.125), math.exp(0.125)))
    band, curve = selectors.projected_traces(projection)
    assert band["meta"]["q"] == pytest.approx(0.25)
    assert band["meta"]["matching"] == "interactivity"
    # the drawn band reaches e^0.25 above the curve's highest throughput, and no further
    assert max(band["y"]) == pytest.approx(max(curve["y"]) * math.exp(0.25))


def test_the_band_is_labelled_as_the_80_percent_band_from_held_out_errors():
    band, curve = selectors.projected_traces(_projection())
    assert band["name"].startswith("B200 projected: 80% band, from held-out errors")
    assert "matched interactivity" in band["name"] and "extrapolated" in band["name"]
    assert band["fill"] == "toself" and curve["line"]["dash"] == "dash"
    assert band["meta"]["provenance"] == curve["meta"]["provenance"] == "projected"


def test_a_band_without_enough_held_out_errors_is_not_drawn(monkeypatch):
    data = copy.deepcopy(reference.calibration_data())
    data["accelerators"]["B200"]["q"]["interactivity"]["extrapolated"] = None
    monkeypatch.setattr(selectors, "shipped_calibration", lambda: calibration.Calibration(data))
    traces = selectors.projected_traces(_projection())
    assert [t["meta"]["role"] for t in traces] == ["curve"]


def test_the_widened_curve_reaches_q_along_both_axes():
    # y = 1/x in log space has slope -1: a point within e^q of it on both axes reaches
    # up to y = e^(2q) / x, and down to e^(-2q) / x
    x = list(np.geomspace(1, 100, 9))
    y = [1 / v for v in x]
    q = 0.2
    xs, ys = selectors.widened_curve(x, y, q)
    half = len(xs) // 2
    upper = list(zip(xs[:half], ys[:half], strict=True))
    lower = list(zip(xs[half:], ys[half:], strict=True))
    inner = [(a, b) for a, b in upper if 1 * math.exp(q) <= a <= 100 * math.exp(-q)]
    assert inner and all(b == pytest.approx(math.exp(2 * q) / a) for a, b in inner)
    inner = [(a, b) for a, b in lower if 1 * math.exp(q) <= a <= 100 * math.exp(-q)]
    assert inner and all(b == pytest.approx(math.exp(-2 * q) / a) for a, b in inner)
    assert min(xs) == pytest.approx(math.exp(-q)) and max(xs) == pytest.approx(100 * math.exp(q))
