from apps.runs.summary import MEETS, MISSES, UNVERIFIED, PointFigures, best_point
from workers.slo import Slo, from_legacy


def figures(
    point_id: int,
    tput: float | None,
    ttft_p99: float | None,
    *,
    success: float = 1.0,
    client_bound: bool | None = None,
    mismatch: float | None = None,
) -> PointFigures:
    return PointFigures(
        point_id=point_id,
        output_tok_s=tput,
        unlabelled_tok_s=None,
        latency_ms={"ttft": {"p99": ttft_p99}} if ttft_p99 is not None else {},
        success_rate=success,
        client_bound=client_bound,
        prompt_length_mismatch_rate=mismatch,
    )


SLO = from_legacy(ttft_ms=2000)


def test_the_fastest_point_that_meets_the_slo_wins_over_a_faster_one_that_misses():
    best = best_point(
        [figures(1, 800, 900), figures(2, 1600, 1900), figures(3, 3000, 4000)], SLO, 8
    )
    assert (best.point_id, best.tput_per_gpu, best.meets_slo) == (2, 200, MEETS)


def test_an_unverifiable_point_ranks_above_one_known_to_miss():
    best = best_point([figures(1, 3000, 4000), figures(2, 100, None)], SLO, 1)
    assert (best.point_id, best.meets_slo) == (2, UNVERIFIED)


def test_when_every_point_misses_the_best_miss_is_shown_as_such():
    best = best_point([figures(1, 3000, 4000), figures(2, 2000, 3000)], SLO, 1)
    assert (best.point_id, best.meets_slo) == (1, MISSES)


def test_without_an_slo_the_fastest_point_wins_and_no_status_is_claimed():
    best = best_point([figures(1, 3000, 4000), figures(2, 2000, 300)], Slo(), 2)
    assert (best.point_id, best.tput_per_gpu, best.meets_slo) == (1, 1500, None)


def test_points_without_throughput_are_never_chosen():
    assert best_point([figures(1, None, 100)], SLO, 1) is None


def test_a_point_with_30_percent_failures_does_not_meet_a_99_percent_slo():
    best = best_point([figures(1, 3000, 100, success=0.7), figures(2, 1000, 100)], SLO, 1)
    assert (best.point_id, best.meets_slo) == (2, MEETS)


def test_a_client_bound_or_length_mismatched_point_is_never_the_leaderboard_point():
    points = [
        figures(1, 9000, 100, client_bound=True),
        figures(2, 8000, 100, mismatch=0.02),
        figures(3, 1000, 100),
    ]
    assert best_point(points, SLO, 1).point_id == 3
    assert best_point(points[:2], SLO, 1) is None


def unstated(point_id: int, tok_s: float) -> PointFigures:
    """A published figure whose source did not say which tokens it counted."""
    return PointFigures(point_id=point_id, output_tok_s=None, unlabelled_tok_s=tok_s)


def test_a_figure_of_unstated_kind_ranks_at_its_lower_reading_as_the_board_prices_it():
    # 1k in / 1k out: 1,500 tok/s read as total tokens is 750 output tok/s, below the
    # stated 1,000; read as output (the old rule) it was 1,500 and won.
    best = best_point([figures(1, 1000, None), unstated(2, 1500)], Slo(), 1, (1000, 1000))
    assert best.point_id == 1 and best.tput_per_gpu == 1000
    best = best_point([unstated(1, 1500)], Slo(), 2, (1000, 1000))
    assert best.tput_per_gpu == 375  # 750 output tok/s over 2 GPUs


def test_a_figure_of_unstated_kind_without_the_scenarios_shape_cannot_rank():
    assert best_point([unstated(1, 1500)], Slo(), 1) is None
