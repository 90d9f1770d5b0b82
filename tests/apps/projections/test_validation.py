"""Leave-one-accelerator-out on the shipped data, and what pages get from it."""

import pytest

from apps.projections import reference, selectors, validation
from apps.projections.model import Shape
from apps.projections.pointmodels import BASELINE


def test_the_shipped_data_validates_at_least_six_accelerators_in_both_precisions():
    observations, _ = reference.calibration_set()
    points = validation.leave_one_accelerator_out(observations, BASELINE)
    assert len(points) == len(observations)
    assert len({p.sku for p in points}) >= 6
    assert {"fp4", "fp8"} <= {p.precision for p in points}


def test_rows_the_model_does_not_describe_are_counted_not_silently_dropped():
    rows = reference.inferencex_rows()
    kept, skipped = validation.observations_from_inferencex(
        rows, architectures=reference.architectures(), accelerators=reference.accelerators()
    )
    assert len(kept) + sum(skipped.values()) == len(rows)
    assert skipped["speculative decoding"] > 0


def test_disaggregated_rows_are_left_out_so_every_figure_is_per_deployed_gpu():
    # InferenceX states a disaggregated row's output rate per decode GPU; single-instance
    # rows serve both phases on every GPU, so their per-GPU total is per deployed GPU
    rows = [r for r in reference.inferencex_rows() if r["disagg"]]
    kept, skipped = validation.observations_from_inferencex(
        rows, architectures=reference.architectures(), accelerators=reference.accelerators()
    )
    assert rows and kept == [] and skipped == {"disaggregated or multi-node": len(rows)}
    single = [r for r in reference.inferencex_rows() if not r["disagg"]][:20]
    kept, _ = validation.observations_from_inferencex(
        single, architectures=reference.architectures(), accelerators=reference.accelerators()
    )
    for obs, row in zip(kept, [r for r in single if r["spec_method"] == "none"], strict=False):
        assert obs.layout.gpus == row["num_decode_gpu"] == row["decode_tp"]


def test_the_glm_projection_is_labelled_and_banded():
    glm = reference.architectures()["glm 5.2"]
    projection = selectors.b200_projection(
        arch=glm, single_stream_tok_s=213, shape=Shape(20_000, 1_000, 0.6)
    )
    assert projection["provenance"] == "projected" and projection["model"] == "GLM 5.2"
    low, high = projection["band"]
    assert low < 1 < high
    b200 = projection["series"]["B200"]["points"]
    assert b200 and all(p["low"] < p["output_tput_per_gpu"] < p["high"] for p in b200)
    # calibrated with the published single stream: the MI355X model passes near it, one
    # request on one of the two TP4 replicas (about 213 / 8 output tok/s per GPU)
    single = projection["series"]["MI355X"]["points"][0]
    assert single["concurrency"] == 1
    assert single["interactivity"] == pytest.approx(213, rel=0.1)
    assert single["output_tput_per_gpu"] == pytest.approx(213 / 8, rel=0.15)
