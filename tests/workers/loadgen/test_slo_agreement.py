"""The load generator's early stop agrees with the one SLO verdict table (workers/slo.py)."""

import pytest

from tests.slo_cases import CASES, Case
from workers.loadgen.metrics import saturation_reason
from workers.result_facts import Slo
from workers.results import Point


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_early_stop_stops_exactly_on_the_points_that_miss_the_slo(case: Case):
    reason = saturation_reason(Point.model_validate(case.point), None, Slo(**case.slo))
    if case.status == "misses":
        assert reason is not None and case.detail in reason
    else:
        assert reason is None


def test_goodput_holds_each_request_to_every_bound_of_the_slo():
    from tests.workers.loadgen.test_metrics import timing
    from workers.loadgen.metrics import build_point

    # 100 ms TTFT, then tokens 10 ms apart (100 tok/s/user) or 50 ms apart (20 tok/s/user).
    fast = [timing(i=k, text_ms=[100, 110, 120, 130]) for k in range(3)]
    slow = [timing(i=3, text_ms=[100, 150, 200, 250])]
    slo = Slo(
        bounds=[
            {"metric": "ttft", "percentile": "p99.9", "limit": 0.2, "unit": "s"},
            {"metric": "interactivity", "percentile": "p50", "limit": 50, "unit": "tok/s/user"},
        ]
    )
    point = build_point(fast + slow, slo=slo)
    assert point.goodput_rps * point.window_s == pytest.approx(3)


def test_the_cli_refuses_an_slo_percentile_that_is_not_stored(capsys):
    from workers.loadgen.cli import main

    with pytest.raises(SystemExit) as exited:
        main(
            ["bench", "--endpoint", "http://127.0.0.1:9", "--model", "m", "--slo-percentile", "75"]
        )
    assert exited.value.code == 2
    assert "stored percentiles: p50, p90, p95, p99, p99.9" in capsys.readouterr().err
