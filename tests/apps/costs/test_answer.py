"""The answer's rule on small, hand-made points (apps/costs/answer.py): no database."""

from dataclasses import replace

from apps.costs.answer import Facts, Measured, answer, best_side, swing
from apps.costs.slo import Slo


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
    assert "MI355X is cheaper up to" in swung.crossover
    assert "B200 from" in swung.crossover
