"""The shipped calibration artifact is what the method computes from the shipped data
(recomputed here and compared within a tolerance, not pinned by file hashes), what build()
writes reads back, and pages read the choice made on every accelerator."""

import copy
import json
import math

import pytest

from apps.projections import calibration, nested, reference
from apps.projections.nested import MATCHINGS
from tests.apps.projections.test_nested import SMALL_CANDIDATES, _small_shipped_set


@pytest.fixture(scope="module")
def recomputed() -> dict:
    """The whole calibration recomputed from the shipped data (a minute or two)."""
    observations, skipped = reference.calibration_observations()
    return calibration.build(
        nested.evaluate(observations),
        data_through=reference.data_through(),
        used=len(observations),
        left_out=skipped,
    )


def test_the_shipped_calibration_is_what_the_method_computes_from_the_shipped_data(recomputed):
    # Fails when the data or the method changed a figure since
    # `python bench/projection_error.py --write`: rerun it and commit calibration.json.
    shipped = json.loads(reference.CALIBRATION_FILE.read_text())
    assert calibration.differences(shipped, recomputed) == []


def test_a_moved_figure_or_choice_is_a_difference_and_a_rounding_is_not(recomputed):
    moved = copy.deepcopy(recomputed)
    # a move of 0.01 in q (1% in the band's half-width), ten times the tolerance
    moved["final"]["q"]["concurrency"]["seen"] += 0.01
    moved["accelerators"]["B200"]["picked"] = "another model"
    found = calibration.differences(recomputed, moved)
    assert found == [
        f"/accelerators/B200/picked: shipped {recomputed['accelerators']['B200']['picked']!r}, "
        "recomputed 'another model'",
        f"/final/q/concurrency/seen: shipped {recomputed['final']['q']['concurrency']['seen']!r}"
        f", recomputed {moved['final']['q']['concurrency']['seen']!r}",
    ]
    rounded = copy.deepcopy(recomputed)
    rounded["final"]["q"]["concurrency"]["seen"] += 1e-9
    assert calibration.differences(recomputed, rounded) == []


def test_the_recomputed_calibration_holds_every_accelerator_and_both_vendors(recomputed):
    observations, _ = reference.calibration_set()
    assert set(recomputed["accelerators"]) == {o.accel.sku for o in observations}
    assert [f["fold"] for f in recomputed["cross_vendor"]] == ["NVIDIA -> AMD", "AMD -> NVIDIA"]
    overall = recomputed["held_out"]["model"][-1]
    assert overall["group"] == "all" and overall["points"] == len(observations)
    for m in MATCHINGS:
        assert overall["p90_ape"][m] >= overall["median_ape"][m]
        assert overall["width"][m] > 1


@pytest.fixture(scope="module")
def small_evaluation():
    return nested.evaluate(_small_shipped_set(), candidates=SMALL_CANDIDATES)


def test_build_writes_each_folds_bands_and_pages_read_the_final_ones_back(small_evaluation):
    def built():
        return calibration.build(small_evaluation, data_through="2026-01-01", used=48, left_out={})

    assert json.dumps(built()) == json.dumps(built())  # deterministic
    read = calibration.Calibration(json.loads(json.dumps(built())))
    final = small_evaluation.final
    for m in MATCHINGS:
        for stratum, band in final.bands[m].items():
            got = read.band(stratum=stratum, matching=m)
            if math.isinf(band.q):
                assert math.isinf(got.q)
            else:
                assert got.q == pytest.approx(band.q, abs=1e-6)
    assert read.picked == final.picked
    assert read.overall().group == "all"
    assert read.overall().points == sum(len(f.points) for f in small_evaluation.folds)


def test_an_infinite_quantile_is_written_as_no_band():
    artifact = {
        "coverage": 0.8,
        "observations": {"used": 3},
        "final": {"q": {"concurrency": {"seen": None}}},
    }
    band = calibration.Calibration(artifact).band(stratum="seen", matching="concurrency")
    assert band.low == 0 and math.isinf(band.high)


def test_a_pick_that_is_no_longer_a_candidate_is_refused_not_guessed():
    artifact = {"final": {"picked": "a model since removed"}}
    with pytest.raises(LookupError, match="no longer a candidate"):
        _ = calibration.Calibration(artifact).picked


def test_the_shipped_bands_cover_at_least_what_they_promise_held_out():
    shipped = calibration.Calibration(reference.calibration_data())
    overall = shipped.overall()
    for m in MATCHINGS:
        assert overall.in_band[m] >= shipped.coverage
        assert shipped.stratum("extrapolated").in_band[m] >= shipped.coverage


def _doc_row(row: calibration.SummaryRow) -> str:
    name = f"**{row.group}**" if row.group == "all" else row.group
    cells = [name, str(row.points), str(row.unreached)]
    for m in MATCHINGS:
        cells += [
            f"{row.median_ape[m]:.1f}%",
            f"{row.p90_ape[m]:.1f}%",
            f"{row.in_band[m]:.0%}",
            f"×{row.width[m]:.2f}",
        ]
    return "| " + " | ".join(cells) + " |"


def test_the_methodology_page_quotes_the_shipped_calibration():
    from pathlib import Path

    text = (Path(__file__).parents[3] / "docs" / "methodology.md").read_text()
    flat = " ".join(text.split())
    shipped = calibration.Calibration(reference.calibration_data())
    for by in ("model", "stratum", "sku"):
        for row in shipped.summary(by):
            assert _doc_row(row) in text
    final = shipped.data["final"]
    assert "picks **the per-phase roofline with the week-wide transfer**" in flat
    assert final["picked"] == "per-phase roofline + transfer (week)"
    widths = {m: {k: math.exp(2 * q) for k, q in final["q"][m].items()} for m in MATCHINGS}
    i, c = widths["interactivity"], widths["concurrency"]
    assert (
        f"×{i['seen']:.2f} (seen) and ×{i['extrapolated']:.2f} (extrapolated) wide at matched "
        f"interactivity, ×{c['seen']:.2f} and ×{c['extrapolated']:.2f} at matched concurrency"
    ) in flat
    for fold in shipped.data["cross_vendor"]:
        row = fold["rows"][-1]
        m = "interactivity"
        assert (
            f"| {fold['fold'].replace('->', '→')} | {fold['picked']} | {row['points']} | "
            f"{row['unreached']} | {row['median_ape'][m]:.1f}% | {row['in_band'][m]:.0%} | "
            f"×{row['width'][m]:.2f} |"
        ) in text
