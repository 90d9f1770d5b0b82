"""Detection over stored runs: what forms a change point, what it links, who may see it."""

from __future__ import annotations

import pytest

from apps.regressions.models import ChangePoint
from apps.regressions.services import regressions_detect
from tests.apps.regressions.series import stored_run, stored_series

pytestmark = pytest.mark.django_db


def throughput_points(**filters):
    return list(ChangePoint.objects.filter(metric="tput_per_gpu", current=True, **filters))


def test_a_drop_after_an_engine_upgrade_is_a_regression_linking_the_runs_either_side():
    before = stored_series([8000] * 6)
    after = stored_series([6400] * 4, first_day=6, engine_version="0.5.24")
    outcome = regressions_detect()
    assert outcome.change_points >= 1
    (cp,) = throughput_points()
    assert cp.direction == ChangePoint.Direction.REGRESSION
    assert cp.before_run_id == before[-1].pk and cp.after_run_id == after[0].pk
    assert cp.before_runs == [r.pk for r in before] and cp.after_runs == [r.pk for r in after]
    assert cp.last_before_at == before[-1].started_at
    assert cp.first_after_at == after[0].started_at
    assert cp.relative == pytest.approx(-0.2, abs=0.01)
    assert cp.relative_low < cp.relative < cp.relative_high < 0
    assert cp.p_value < 0.001
    assert cp.level == "c16" and cp.scenario.slug == "seed-20k-1k-60"
    changed = {d["key"]: (d["before"], d["after"]) for d in cp.differences}
    assert changed["engine_version"] == ("0.5.23", "0.5.24")
    # The deployment page's series does not split at the upgrade: both runs are one series.
    assert before[-1].deployment_id != after[0].deployment_id


def test_detecting_again_keeps_each_change_point_once_and_adds_the_new_one():
    stored_series([8000] * 6)
    stored_series([6400] * 3, first_day=6)
    regressions_detect()
    (cp,) = throughput_points()
    regressions_detect()
    assert throughput_points() == [cp]
    # Back at the old level: the drop is still the same change point, and the recovery is one.
    recovered = stored_series([8000] * 5, first_day=9)
    outcome = regressions_detect()
    drop, rise = sorted(throughput_points(), key=lambda c: c.first_after_at)
    assert drop.pk == cp.pk and drop.direction == ChangePoint.Direction.REGRESSION
    assert rise.after_run_id == recovered[0].pk
    assert rise.direction == ChangePoint.Direction.IMPROVEMENT
    assert outcome.new >= 1


def test_invalid_runs_neither_form_nor_hide_a_change_point():
    flat = stored_series([8000] * 10)
    # A client-bound run, a run below the SLO's success minimum and a simulated run, all far
    # below the level, in a flat series: none of them is a regression.
    stored_run(3, 2000, client_bound=True)
    stored_run(4, 2000, failed=5)
    stored_run(5, 2000, provenance="simulated")
    stored_run(6, 2100, client_bound=True)
    regressions_detect()
    assert throughput_points() == []
    # And a real drop with invalid runs at the old level right after it is still found.
    stored_series([6000] * 4, first_day=10)
    stored_run(10, 8000, client_bound=True)
    stored_run(11, 8000, failed=5)
    regressions_detect()
    (cp,) = throughput_points()
    assert cp.before_run_id == flat[-1].pk
    assert cp.relative == pytest.approx(-0.25, abs=0.01)


def test_a_private_series_stays_private_to_its_organization(org):
    stored_series([8000] * 6, org=org, is_public=False)
    stored_series([6000] * 4, first_day=6, org=org, is_public=False)
    regressions_detect()
    assert throughput_points(org__isnull=True) == []
    (cp,) = throughput_points(org=org)
    assert cp.direction == ChangePoint.Direction.REGRESSION


def test_a_rise_in_throughput_is_an_improvement():
    stored_series([8000] * 6)
    stored_series([9600] * 4, first_day=6)
    regressions_detect()
    (cp,) = throughput_points()
    assert cp.direction == ChangePoint.Direction.IMPROVEMENT
    assert cp.relative == pytest.approx(0.2, abs=0.01)


def test_the_scheduler_detects_after_new_runs_and_not_again_without_them():
    from io import StringIO

    from django.core.management import call_command

    from apps.regressions.models import Detection

    stored_series([8000] * 6)
    stored_series([6000] * 3, first_day=6)
    out = StringIO()
    call_command("runscheduler", "--once", stdout=out)
    assert throughput_points()
    assert "regressions: " in out.getvalue() and Detection.objects.count() == 1
    call_command("runscheduler", "--once", stdout=StringIO())
    assert Detection.objects.count() == 1
    stored_series([6000], first_day=9)
    call_command("runscheduler", "--once", stdout=StringIO())
    assert Detection.objects.count() == 2
