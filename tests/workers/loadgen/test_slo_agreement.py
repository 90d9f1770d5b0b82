"""The load generator's early stop agrees with the one SLO verdict table (workers/slo.py)."""

import pytest

from tests.slo_cases import CASES, Case
from workers.loadgen.metrics import saturation_reason
from workers.results import Point, Slo


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_early_stop_stops_exactly_on_the_points_that_miss_the_slo(case: Case):
    reason = saturation_reason(Point.model_validate(case.point), None, Slo(**case.slo))
    if case.status == "misses":
        assert reason is not None and case.detail in reason
    else:
        assert reason is None
