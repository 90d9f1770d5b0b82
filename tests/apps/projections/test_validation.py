"""Leave-one-accelerator-out on the shipped InferenceX data, and what pages get from it."""

import math

import pytest

from apps.projections import reference, selectors, validation
from apps.projections.model import Shape


def test_the_shipped_data_validates_at_least_six_accelerators_in_both_precisions():
    points = validation.leave_one_accelerator_out(selectors.inferencex_observations())
    assert len({p.sku for p in points}) >= 6
    assert {p.precision for p in points} == {"fp4", "fp8"}
    table = validation.error_table(points, by="sku")
    assert table[-1].group == "all" and table[-1].points == len(points)
    # every held-out accelerator's calibration excluded it
    assert all(row.median_ape is not None for row in table)


def test_rows_the_model_does_not_describe_are_counted_not_silently_dropped():
    rows = reference.inferencex_rows()
    kept, skipped = validation.observations_from_inferencex(
        rows, architectures=reference.architectures(), accelerators=reference.accelerators()
    )
    assert len(kept) + sum(skipped.values()) == len(rows)
    assert skipped["speculative decoding"] > 0


def test_the_glm_projection_is_labelled_and_banded():
    projection = selectors.glm_b200_projection(
        single_stream_tok_s=213, shape=Shape(20_000, 1_000, 0.6)
    )
    assert projection["provenance"] == "projected"
    low, high = projection["band"]
    assert low < 1 < high
    b200 = projection["series"]["B200"]["points"]
    assert b200 and all(p["low"] < p["output_tput_per_gpu"] < p["high"] for p in b200)
    # anchored: the MI355X model passes through the published single stream, one request
    # on one of the two TP4 replicas (about 213 / 8 output tok/s per GPU)
    single = projection["series"]["MI355X"]["points"][0]
    assert single["concurrency"] == 1
    assert single["interactivity"] == pytest.approx(213)
    assert single["output_tput_per_gpu"] == pytest.approx(213 / 8, rel=0.15)


def test_the_methodology_page_quotes_the_shipped_calibration():
    from pathlib import Path

    text = (Path(__file__).parents[3] / "docs" / "methodology.md").read_text()
    shipped = selectors.shipped_calibration()
    for row in shipped.summary("model"):
        name = f"**{row.group}**" if row.group == "all" else row.group
        ape, band = row.median_ape, row.in_band
        assert (
            f"| {name} | {row.points} | {row.unreached} | {ape['interactivity']:.1f}% | "
            f"{band['interactivity']:.0%} | {ape['concurrency']:.1f}% | {band['concurrency']:.0%} |"
        ) in text
    for sku, entry in shipped.data["accelerators"].items():
        q = entry["q"]["interactivity"]
        assert (
            f"| {sku} | {entry['picked']} | ×{math.exp(q['seen']):.2f} | "
            f"×{math.exp(q['extrapolated']):.2f} | {entry['points']} | "
            f"{entry['in_band']['interactivity']:.0%} |"
        ) in text
    b200 = shipped.data["accelerators"]["B200"]["q"]
    assert (
        f"(×{math.exp(b200['interactivity']['extrapolated']):.2f} at\nmatched interactivity, "
        f"×{math.exp(b200['concurrency']['extrapolated']):.2f} at matched concurrency)"
    ) in text
