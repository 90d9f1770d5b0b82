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


def test_costs_its_exports_and_the_api_read_the_figure_as_the_board_does(client):
    call_command("loadreference", no_inferencex=True, verbosity=0)
    run = Run.objects.get(idempotency_key="published:wafer-glm52-mi355x-tp4dp2-fp4kernel")
    board_json = client.get(
        "/?model=GLM 5.2&scenario=seed-20k-1k-60&unchecked=1&format=json"
    ).json()
    [on_board] = [r for r in board_json if r["run_id"] == run.pk]
    assert on_board["tok_s_kind"] == "unstated" and on_board["tok_s_per_gpu_range"]
    # No SLO bound: the figure is priced as published, on the board's default tier and basis.
    query = "model=GLM 5.2&ttft_s_max=&min_success_pct=0"
    board = client.get("/?model=GLM 5.2&scenario=seed-20k-1k-60&unchecked=1").content.decode()
    at = board.index(f'href="/runs/{run.pk}/"')
    [as_shown] = RANGE.findall(board[at - 3000 : at])
    page = client.get(f"/costs/?{query}").content.decode()
    row = page[page.index(f'<tr class="row-main" data-run="{run.pk}"') :].split("</tr>")[0]
    assert as_shown in RANGE.findall(row)
    for records in (
        client.get(f"/costs/export.json?{query}").json()["rows"],
        client.get(f"/api/v1/costs/procurement?{query}").json()["rows"],
    ):
        [mine] = [r for r in records if r["run_id"] == run.pk]
        assert mine["tok_s_kind"] == "unstated"
        assert mine["tok_s_per_gpu_range"] == on_board["tok_s_per_gpu_range"]
        assert mine["usd_per_mtok_range"] == on_board["usd_per_mtok_range"]


def test_the_run_cost_api_reads_the_figure_as_the_board_does(client):
    call_command("loadreference", no_inferencex=True, verbosity=0)
    run = Run.objects.get(idempotency_key="published:wafer-glm52-mi355x-tp4dp2-fp4kernel")
    board_json = client.get(
        "/?model=GLM 5.2&scenario=seed-20k-1k-60&unchecked=1&format=json"
    ).json()
    [on_board] = [r for r in board_json if r["run_id"] == run.pk]
    body = client.get(
        f"/api/v1/costs/runs/{run.pk}/slo?min_success_pct=0&tier=owning_hyperscaler"
    ).json()
    assert body["tok_s_kind"] == "unstated"
    assert body["tok_s_per_gpu_range"] == on_board["tok_s_per_gpu_range"]
    assert body["usd_per_mtok_range"] == on_board["usd_per_mtok_range"]


def test_the_run_page_and_the_compare_csv_read_it_as_the_board_does(client):
    call_command("loadreference", no_inferencex=True, verbosity=0)
    run = Run.objects.get(idempotency_key="published:wafer-glm52-mi355x-tp4dp2-fp4kernel")
    other = Run.objects.filter(provenance="published").exclude(pk=run.pk).first()
    board = client.get("/?model=GLM 5.2&scenario=seed-20k-1k-60&unchecked=1")
    html = board.content.decode()
    at = html.index(f'href="/runs/{run.pk}/"')
    [on_board] = RANGE.findall(html[at - 3000 : at])
    run_page = client.get(f"/runs/{run.pk}/?scenario=seed-20k-1k-60").content.decode()
    assert f'{on_board[0]}–{on_board[1]} <span class="flag">kind unstated' in run_page
    board_json = client.get(
        "/?model=GLM 5.2&scenario=seed-20k-1k-60&unchecked=1&format=json"
    ).json()
    [row] = [r for r in board_json if r["run_id"] == run.pk]
    csv = client.get(
        f"/compare/?d={run.deployment_id}&d={other.deployment_id}&scenario=seed-20k-1k-60"
        "&format=csv"
    ).content.decode()
    assert row["tok_s_per_gpu_range"] in csv and row["usd_per_mtok_range"] in csv
