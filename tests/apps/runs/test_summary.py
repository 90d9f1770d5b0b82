from apps.runs.summary import MEETS, MISSES, UNVERIFIED, PointFigures, SloBounds, best_point


def figures(point_id: int, tput: float | None, ttft_p99: float | None) -> PointFigures:
    return PointFigures(
        point_id=point_id,
        output_tok_s=tput,
        unlabelled_tok_s=None,
        ttft_p50_ms=None,
        ttft_p99_ms=ttft_p99,
        tpot_p50_ms=None,
        e2el_p99_ms=None,
    )


SLO = SloBounds(ttft_ms=2000)


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
    best = best_point([figures(1, 3000, 4000), figures(2, 2000, 300)], SloBounds(), 2)
    assert (best.point_id, best.tput_per_gpu, best.meets_slo) == (1, 1500, None)


def test_points_without_throughput_are_never_chosen():
    assert best_point([figures(1, None, 100)], SLO, 1) is None
