"""The shipped InferenceX history: loadreference stores it and finds its change points, and
the regressions page lists them with their dates and runs."""

from __future__ import annotations

import re

import pytest
from django.core.management import call_command

from apps.regressions.models import ChangePoint
from apps.runs.models import Run
from workers.importers import inferencex_api

pytestmark = pytest.mark.django_db


def test_loadreference_finds_the_historys_change_points_and_the_page_lists_them(client):
    call_command("loadreference", verbosity=0)
    points = ChangePoint.objects.filter(current=True, org__isnull=True)
    assert points.count() > 0
    for cp in points[:50]:
        before, after = Run.objects.get(pk=cp.before_run_id), Run.objects.get(pk=cp.after_run_id)
        # Both sides are InferenceX runs of one configuration, the later one after the change.
        assert before.source_tool == after.source_tool == inferencex_api.TOOL
        assert before.started_at < after.started_at
        assert cp.last_before_at == before.started_at and cp.first_after_at == after.started_at
        assert cp.relative_low <= cp.relative <= cp.relative_high
        assert cp.before_runs[-1] == cp.before_run_id and cp.after_runs[0] == cp.after_run_id
    page = client.get("/regressions/?model=DeepSeek-R1-0528").content.decode()
    listed = re.findall(r'href="/regressions/(\d+)/"', page)
    assert listed and set(map(int, listed)) <= set(points.values_list("pk", flat=True))
    first = points.filter(deployment__model__name="DeepSeek-R1-0528").first()
    assert f">{first.first_after_at:%Y-%m-%d}</time>" in page
    assert f'href="/runs/{first.after_run_id}/"' in page
