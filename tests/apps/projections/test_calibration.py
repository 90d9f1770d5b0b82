"""The shipped calibration artifact: current against the shipped inputs, what build() writes,
and the bands it holds keep the coverage they promise on held-out points."""

import json
import math

import pytest

from apps.projections import calibration, nested, reference
from apps.projections.nested import MATCHINGS
from tests.apps.projections.test_nested import _small_shipped_set


def test_the_shipped_calibration_was_computed_from_the_shipped_inputs():
    # Stale when any input changed since `python bench/projection_error.py --write`:
    # rerun it and commit apps/projections/reference/calibration.json.
    shipped = json.loads(reference.CALIBRATION_FILE.read_text())
    assert shipped["inputs"] == reference.fingerprints()
    assert shipped["version"] == calibration.VERSION
    assert shipped["data_through"] == reference.data_through()


def test_a_changed_input_no_longer_matches_the_shipped_fingerprints(tmp_path, monkeypatch):
    real = reference.calibration_inputs()
    copies = []
    for i, path in enumerate(real):
        copy = tmp_path / f"{i}-{path.name}"
        copy.write_bytes(path.read_bytes())
        copies.append(copy)
    monkeypatch.setattr(reference, "_ROOT", tmp_path.resolve())
    monkeypatch.setattr(reference, "calibration_inputs", lambda: copies)
    before = reference.fingerprints()
    history = copies[1]
    rows = json.loads(history.read_text())
    rows[0]["metrics"]["tput_per_gpu"] *= 1.01  # one measured figure revised
    history.write_text(json.dumps(rows))
    after = reference.fingerprints()
    assert [k for k in before if before[k] != after[k]] == [history.name]


def test_every_file_the_bands_depend_on_is_fingerprinted():
    names = set(reference.fingerprints())
    for needed in (
        "apps/catalog/reference/inferencex/benchmarks.json",
        "apps/catalog/reference/inferencex/benchmarks-history.json",
        "apps/catalog/reference/glm52-cookbook.json",
        "apps/projections/reference/accelerators.json",
        "apps/projections/reference/models.json",
        "apps/projections/nested.py",
        "apps/projections/conformal.py",
        "apps/projections/model.py",
    ):
        assert needed in names


@pytest.fixture(scope="module")
def small_folds():
    return nested.nested_leave_one_accelerator_out(
        _small_shipped_set(), candidates=[nested.Candidate("family-first", False)]
    )


def test_build_writes_each_folds_bands_and_reads_them_back(small_folds):
    built = calibration.build(small_folds, inputs={"x": "0"}, data_through="2026-01-01")
    again = calibration.build(small_folds, inputs={"x": "0"}, data_through="2026-01-01")
    assert json.dumps(built) == json.dumps(again)  # deterministic
    read = calibration.Calibration(json.loads(json.dumps(built)))
    for fold in small_folds:
        for m in MATCHINGS:
            for stratum, band in fold.bands[m].items():
                got = read.band(fold.sku, stratum=stratum, matching=m)
                if math.isinf(band.q):
                    assert math.isinf(got.q)
                else:
                    assert got.q == pytest.approx(band.q, abs=1e-6)
    assert read.band("GB300", stratum="seen", matching="concurrency") is None
    assert read.overall().group == "all"
    assert read.overall().points == sum(len(f.points) for f in small_folds)


def test_an_infinite_quantile_is_written_as_no_band():
    artifact = {
        "coverage": 0.8,
        "accelerators": {"B200": {"points": 3, "q": {"concurrency": {"seen": None}}}},
    }
    band = calibration.Calibration(artifact).band("b200", stratum="seen", matching="concurrency")
    assert band.low == 0 and math.isinf(band.high)


def test_the_shipped_bands_cover_80_percent_held_out_and_each_model_70():
    shipped = calibration.Calibration(reference.calibration_data())
    by_model = shipped.summary("model")
    assert by_model[-1].group == "all"
    assert by_model[-1].in_band["interactivity"] >= 0.80
    assert all(row.in_band["interactivity"] >= 0.70 for row in by_model)
    [extrapolated] = [r for r in shipped.summary("stratum") if r.group == "extrapolated"]
    assert extrapolated.in_band["interactivity"] >= 0.80
    assert extrapolated.in_band["concurrency"] >= 0.80
