"""A published throughput of unstated token kind reads the same on every page that shows it:
its two readings and the flag, never one reading alone."""

import re

import pytest
from django.core.management import call_command

from apps.runs.models import Run

pytestmark = pytest.mark.django_db

RANGE = re.compile(r"(\d+\.\d)–(\d+\.\d) <span class=\"flag\">kind unstated")


def test_the_board_compare_and_deployment_pages_show_the_same_two_readings(client):
    call_command("loadreference", no_inferencex=True, verbosity=0)
    run = Run.objects.get(idempotency_key="published:wafer-glm52-mi355x-tp4dp2-fp4kernel")
    other = Run.objects.filter(provenance="published").exclude(pk=run.pk).first()
    # Cited figures fail the board's rules (no image digest, no flags): the board that lists
    # unchecked runs shows them.
    board = client.get("/?model=GLM 5.2&scenario=seed-20k-1k-60&unchecked=1").content.decode()
    row = board[
        board.index(f'href="/runs/{run.pk}/"') - 3000 : board.index(f'href="/runs/{run.pk}/"')
    ]
    [on_board] = RANGE.findall(row)
    compare = client.get(
        f"/compare/?d={run.deployment_id}&d={other.deployment_id}&scenario=seed-20k-1k-60"
    ).content.decode()
    assert on_board in RANGE.findall(compare)
    # No ratio is drawn from one of two readings.
    assert "×1.00" not in compare.split("tok/s/GPU at SLO")[1].split("</tr>")[0]
    history = client.get(f"/deployments/{run.deployment_id}/").content.decode()
    assert on_board in RANGE.findall(history)
