"""Pages draw the shipped calibration's 80% band (apps/projections/reference/calibration.json):
the band made on every accelerator for the projection's stratum, its held-out coverage and
width, and say which matching it uses."""

import copy
import math

import numpy as np
import pytest

from apps.projections import calibration, reference, selectors
from apps.projections.model import Shape


def _projection() -> dict:
    glm = reference.architectures()["glm 5.2"]
    return selectors.b200_projection(
        arch=glm, single_stream_tok_s=213, shape=Shape(20_000, 1_000, 0.6)
    )


def _shipped_q(matching: str, stratum: str = "extrapolated") -> float:
    return reference.calibration_data()["final"]["q"][matching][stratum]


def test_the_glm_b200_projection_takes_the_extrapolated_band_from_the_artifact():
    projection = _projection()
    checked = projection["validation"]
    # GLM 5.2 in FP4 with sglang is in none of the calibration's Blackwell runs
    assert checked.stratum == "extrapolated"
    assert checked.band_along_curve.q == pytest.approx(_shipped_q("interactivity"))
    q = _shipped_q("concurrency")
    assert projection["band"] == pytest.approx((math.exp(-q), math.exp(q)))
    for p in projection["series"]["B200"]["points"]:
        assert p["low"] == pytest.approx(p["output_tput_per_gpu"] * math.exp(-q))
        assert p["high"] == pytest.approx(p["output_tput_per_gpu"] * math.exp(q))
    # what the page says of it: the stratum's held-out share inside, and the band's width
    [row] = [
        r
        for r in reference.calibration_data()["held_out"]["stratum"]
        if r["group"] == "extrapolated"
    ]
    assert checked.covered == row["in_band"]["interactivity"]
    assert checked.covered_at_concurrency == row["in_band"]["concurrency"]
    assert checked.band_at_concurrency.width == pytest.approx(math.exp(2 * q))


def test_pages_follow_the_artifact_not_a_band_of_their_own(monkeypatch):
    data = copy.deepcopy(reference.calibration_data())
    data["final"]["q"]["interactivity"]["extrapolated"] = 0.25
    data["final"]["q"]["concurrency"]["extrapolated"] = 0.125
    monkeypatch.setattr(selectors, "shipped_calibration", lambda: calibration.Calibration(data))
    projection = _projection()
    assert projection["band"] == pytest.approx((math.exp(-0.125), math.exp(0.125)))
    band, curve = selectors.projected_traces(projection)
    assert band["meta"]["q"] == pytest.approx(0.25)
    assert band["meta"]["matching"] == "interactivity"
    assert band["meta"]["width"] == pytest.approx(math.exp(0.5))
    # the drawn band reaches e^0.25 above the curve's highest throughput, and no further
    assert max(band["y"]) == pytest.approx(max(curve["y"]) * math.exp(0.25))


def test_the_band_is_labelled_with_its_promise_coverage_and_width():
    band, curve = selectors.projected_traces(_projection())
    checked = _projection()["validation"]
    assert band["name"].startswith("B200 projected: 80% band, from held-out errors")
    assert "matched interactivity" in band["name"] and "extrapolated" in band["name"]
    assert f"held out, {checked.covered:.0%} inside" in band["name"]
    assert f"×{checked.band_along_curve.width:.2f} wide" in band["name"]
    assert band["fill"] == "toself" and curve["line"]["dash"] == "dash"
    assert band["meta"]["provenance"] == curve["meta"]["provenance"] == "projected"


def test_a_band_without_enough_held_out_errors_is_not_drawn(monkeypatch):
    data = copy.deepcopy(reference.calibration_data())
    data["final"]["q"]["interactivity"]["extrapolated"] = None
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
