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
