"""The answer's rule on small, hand-made points (apps/costs/answer.py): no database."""

from dataclasses import replace

import numpy as np
import pytest

from apps.costs.answer import (
    Facts,
    Measured,
    answer,
    best_side,
    by_deployment,
    with_interval,
)
from apps.costs.answer_swing import swing, verdict_flips
from apps.costs.slo import Slo
from workers import significance


def _point(sku: str, run: int, conc: int, tok: float, inter: float, ttft_s: float, **facts):
    base = Measured(
        run_id=run,
        deployment_id=run,
        deployment=f"8×{sku}",
        accelerator=sku,
        gpus=8,
        engine="sglang",
        engine_version="0.5",
        image="img",
        precision="fp4",
        spec="",
        parallelism="TP8",
        serving="aggregated",
        origin="imported",
        provenance="imported",
        rules_passed=True,
        rules_failed=(),
        lengths="8192/1024",
        level=f"c={conc}",
        concurrency=conc,
        tok_s_per_gpu=tok,
        basis_stated=True,
        usd_per_gpu_hour=2.0,
        metrics={"interactivity.p50": inter, "ttft_s.p99": ttft_s},
        success_rate=None,
    )
    return replace(base, **facts)


def _slo(**bounds) -> Slo:
    return Slo.of(**bounds, min_success_rate=0.0)


POINTS = [
    # A (MI355X), sglang without speculation: more throughput as interactivity falls.
    _point("MI355X", 1, 4, 100, 90, 1.0),
    _point("MI355X", 1, 16, 300, 60, 2.0),
    _point("MI355X", 1, 64, 700, 25, 5.0),
    # A with MTP on another engine: faster per user.
    _point("MI355X", 2, 16, 400, 80, 2.0, engine="vllm", spec="mtp"),
    # B (B200), sglang without speculation.
    _point("B200", 3, 4, 150, 70, 0.8),
    _point("B200", 3, 16, 350, 40, 1.5),
    _point("B200", 3, 64, 900, 20, 3.0),
]


def test_it_takes_each_sides_best_measured_point_meeting_the_floor():
    result = answer(
        POINTS,
        a="MI355X",
        b="B200",
        facts=Facts("fp4", "none", "sglang"),
        slo=_slo(interactivity_min=50),
    )
    assert (result.a.point.run_id, result.a.point.concurrency) == (1, 16)
    assert (result.b.point.run_id, result.b.point.concurrency) == (3, 4)
    assert result.tok_ratio == 300 / 150
    assert result.usd_ratio == 150 / 300  # same price, so cost is the inverse of throughput
    assert result.differs == ()
    assert result.uncertainty == "single measurement"
    assert "no interpolation" in result.rule


def test_it_names_what_differs_when_any_engine_and_speculation_may_take_part():
    result = answer(POINTS, a="MI355X", b="B200", facts=Facts(), slo=_slo(interactivity_min=50))
    assert (result.a.point.run_id, result.a.point.concurrency) == (2, 16)
    assert "engine: vllm / sglang" in result.differs
    assert "speculative decoding: mtp / none" in result.differs


def test_it_says_no_point_meets_with_the_nearest_point_and_the_failing_bound():
    result = answer(
        POINTS, a="MI355X", b="B200", facts=Facts(spec="none"), slo=_slo(interactivity_min=80)
    )
    assert result.a.point is not None and result.a.point.concurrency == 4
    assert result.b.point is None
    assert result.b.nearest is not None and result.b.nearest.concurrency == 4
    assert any("interactivity p50 is 70" in f for f in result.b.failing)
    assert "no B200 point meets" in result.b.reason
    assert result.tok_ratio is None


def test_it_applies_every_bound_of_the_slo_not_only_interactivity():
    side = best_side(POINTS, "MI355X", _slo(interactivity_min=20, ttft_s_max=2.0))
    assert side.point.concurrency == 16  # c=64 has the throughput but a TTFT of 5 s


def test_it_interpolates_only_when_asked_and_never_across_a_wide_gap():
    slo = _slo(interactivity_min=50)
    close = [_point("B200", 9, 16, 300, 60, 1.0), _point("B200", 9, 32, 500, 40, 1.0)]
    assert best_side(close, "B200", slo).reading == "measured"
    read = best_side(close, "B200", slo, interpolate=True)
    assert read.reading == "interpolated" and read.tok_s_per_gpu == 400
    assert "interpolated" in read.reason
    wide = [_point("B200", 9, 16, 300, 60, 1.0), _point("B200", 9, 512, 900, 10, 1.0)]
    refused = best_side(wide, "B200", slo, interpolate=True, max_gap=2.0)
    assert refused.reading == "measured" and refused.tok_s_per_gpu == 300


def test_the_swing_names_the_floor_where_the_cheaper_side_changes():
    swung = swing(POINTS, a="MI355X", b="B200", facts=Facts(spec="none"), slo=_slo())
    leaders = {row.floor: row.usd_ratio for row in swung.rows}
    assert leaders[25.0] < 1 < leaders[40.0]  # MI355X cheaper at 25, B200 at 40
    # Every floor from just above 25 to 40 gives the answer at 40: the change is exactly there.
    assert "MI355X is cheaper at floors up to 25 tok/s/user, B200 above it" in swung.crossover


def test_the_swing_solves_each_crossover_exactly_however_many_floors_were_measured():
    # MI355X measured at 120 floors (more than the 40 rows shown), slower as the floor rises;
    # B200 at one fast-per-user point. By hand: MI355X's best at a floor 30 + 0.5 i is
    # 1000 - 5 i, which beats B200's 762 up to i = 47 (765), not from i = 48 (760).
    points = [
        _point("MI355X", 1, 4 * (i + 1), 1000 - 5 * i, 30 + 0.5 * i, 1.0) for i in range(120)
    ] + [_point("B200", 2, 4, 762, 100, 1.0)]
    swung = swing(points, a="MI355X", b="B200", facts=Facts(), slo=_slo(), limit=40)
    ratios = {row.floor: row.usd_ratio for row in swung.rows}
    assert ratios[53.5] < 1 < ratios[54.0]  # both floors shown, however the rows are thinned
    assert swung.crossover == "MI355X is cheaper at floors up to 53.5 tok/s/user, B200 above it"
    assert len(swung.rows) <= 42


def test_it_states_a_single_measurement_when_neither_side_repeats_nor_has_records():
    result = answer(POINTS, a="MI355X", b="B200", facts=Facts(spec="none"), slo=_slo())
    stated = with_interval(result, {}, basis="output")
    assert stated.interval is None
    assert stated.uncertainty == "single measurement"


# Three runs of A's configuration at one level (a nightly sweep), one of B's.
REPEATED = [
    _point("MI355X", 11, 16, 330, 60, 1.0, point_id=111, deployment_id=1),
    _point("MI355X", 12, 16, 270, 61, 1.0, point_id=112, deployment_id=1),
    _point("MI355X", 13, 16, 300, 62, 1.0, point_id=113, deployment_id=1),
    _point("B200", 21, 16, 300, 60, 1.0, point_id=121, deployment_id=2),
]


def test_it_gives_the_ratio_an_interval_from_repeated_runs_through_the_significance_module():
    result = answer(REPEATED, a="MI355X", b="B200", facts=Facts(), slo=_slo())
    assert result.a.point.run_id == 11 and result.a.repeats == 3  # the best, of three
    stated = with_interval(result, {}, basis="output")
    interval = stated.interval
    # The module's own bootstrap over runs, B against A, read the other way round.
    expected = significance.compare("output_tok_s_gpu", [300.0], [330.0, 270.0, 300.0])
    assert interval.tok_ratio == pytest.approx(1 + expected.change) == pytest.approx(1.0)
    assert (interval.tok_low, interval.tok_high) == (
        pytest.approx(1 + expected.low),
        pytest.approx(1 + expected.high),
    )
    assert interval.tok_low < 1 < interval.tok_high
    # Same price a side: the $/Mtok ratio's bounds are the throughput's, inverted.
    assert interval.usd_low == pytest.approx(1 / interval.tok_high)
    assert (interval.runs_a, interval.runs_b) == (3, 1)
    assert "3 and 1 run(s)" in stated.uncertainty and "95%" in stated.uncertainty
    # The interval is stated with its own estimate (the means', 1.00×), not beside the best
    # points' ratio (330 / 300 = 1.10×, which sits on its edge): the $/Mtok's too, the price
    # ratio over the throughput's.
    assert stated.tok_ratio == pytest.approx(1.1)
    assert interval.usd_ratio == pytest.approx(1 / interval.tok_ratio)
    mean = f"{interval.tok_ratio:.2f}× [{interval.tok_low:.2f}×, {interval.tok_high:.2f}×]"
    assert f"at these levels: {mean} the tok/s/GPU" in stated.uncertainty
    assert f"{interval.usd_ratio:.2f}× [{interval.usd_low:.2f}×" in stated.uncertainty


def test_it_chooses_from_each_configurations_latest_complete_sweep_only():
    # Run 31 is an older run of run 32's configuration (not its sweep): faster, not chosen,
    # but a repeat at the chosen level, so the interval takes it in.
    points = [
        _point("MI355X", 31, 16, 500, 60, 1.0, deployment_id=7, current=False, point_id=31),
        _point("MI355X", 32, 16, 300, 60, 1.0, deployment_id=7, point_id=32),
        _point("B200", 3, 16, 350, 40, 1.5, point_id=3),
    ]
    result = answer(points, a="MI355X", b="B200", facts=Facts(), slo=_slo())
    assert (result.a.point.run_id, result.a.tok_s_per_gpu) == (32, 300)
    assert [p.run_id for p in result.a.level_runs] == [32, 31]


def test_what_differs_names_the_measurement_dates_and_the_days_between_them():
    from datetime import UTC, datetime

    points = [
        replace(POINTS[1], measured_at=datetime(2026, 6, 11, tzinfo=UTC), image="rocm:v0.5.12"),
        replace(POINTS[4], measured_at=datetime(2025, 11, 2, tzinfo=UTC), image="cu129:v0.5.4"),
    ]
    result = answer(points, a="MI355X", b="B200", facts=Facts(), slo=_slo())
    assert result.differs[0] == "measured: 2026-06-11 / 2025-11-02 (221 days apart)"
    assert "image: rocm:v0.5.12 / cu129:v0.5.4" in result.differs


def test_a_filter_left_at_its_default_that_flips_the_verdict_is_named_with_both_ratios():
    # Without speculative decoding MI355X is cheaper (300 against 150 tok/s/GPU at the floor);
    # B200 with MTP (900 tok/s/GPU) makes B200 cheaper once speculative decoding is allowed.
    points = [*POINTS, _point("B200", 4, 16, 900, 60, 1.0, engine="vllm", spec="mtp")]
    asked = Facts("fp4", "none")
    result = answer(points, a="MI355X", b="B200", facts=asked, slo=_slo(interactivity_min=50))
    assert result.usd_ratio == pytest.approx(150 / 300)
    flips = verdict_flips(points, result, a="MI355X", b="B200")
    assert flips == (
        "speculative decoding: with any, 2.25× the $/Mtok (B200 cheaper); as asked (none), "
        "0.50× the $/Mtok (MI355X cheaper)",
    )
    # A filter whose other value keeps the verdict is not listed.
    assert verdict_flips(POINTS, result, a="MI355X", b="B200") == ()


def _records(rng: np.random.Generator, e2el_ms: float, requests: int = 400):
    """A closed-loop sample of `requests` requests, 16 output tokens each."""
    e2el = e2el_ms * rng.lognormal(0, 0.1, requests)
    send = np.cumsum(e2el) / 4  # four slots, roughly
    return significance.Sample(
        send_ms=send,
        n_out=np.full(requests, 16.0),
        n_in=np.full(requests, 100.0),
        ok=np.ones(requests, dtype=bool),
        ttft_ms=e2el * 0.2,
        tpot_ms=e2el * 0.8 / 15,
        e2el_ms=e2el,
        window_s=float((send[-1] + e2el[-1]) / 1000),
        gpus=8,
        closed_loop=True,
    )


def test_it_gives_the_ratio_an_interval_from_request_records_of_single_runs():
    points = [
        _point("MI355X", 1, 4, 100, 90, 1.0, point_id=1, deployment_id=1),
        _point("MI355X", 2, 4, 100, 90, 1.0, point_id=2, deployment_id=2),
    ]
    result = answer(
        points, a="#1", b="#2", facts=Facts(), slo=_slo(), side_of=by_deployment
    )  # /compare/'s sides: one deployment each, on the same accelerator
    assert (result.a.point.run_id, result.b.point.run_id) == (1, 2)
    rng = np.random.default_rng(7)
    records = {1: _records(rng, 100), 2: _records(rng, 125)}
    stated = with_interval(result, records, basis="output", metrics=("ttft_p99_ms",))
    interval = stated.interval
    assert (interval.requests_a, interval.requests_b) == (400, 400)
    # A is about 25% faster per request than B: its throughput ratio's interval says so.
    assert 1 < interval.tok_low < interval.tok_ratio < interval.tok_high
    assert [d.metric.name for d in interval.differences] == ["output_tok_s_gpu", "ttft_p99_ms"]
    assert "400 and 400 request records" in stated.uncertainty
