"""A published throughput of unstated token kind reads the same on every page that shows it:
its two readings and the flag, never one reading alone."""

import re

import pytest
from django.core.management import call_command

from apps.runs.models import Run

pytestmark = pytest.mark.django_db

RANGE = re.compile(r"(\d+\.\d)–(\d+\.\d) <span class=\"flag\">kind unstated")
# Cited figures fail the board's rules (no image digest, no flags): the board that lists
# unchecked runs shows them.
BOARD = "/?model=GLM 5.2&scenario=seed-20k-1k-60&unchecked=1"


@pytest.fixture
def wafer():
    """The published Wafer figure (2,626 tok/s per node, kind unstated) and another run."""
    call_command("loadreference", no_inferencex=True, verbosity=0)
    run = Run.objects.get(idempotency_key="published:wafer-glm52-mi355x-tp4dp2-fp4kernel")
    return run, Run.objects.filter(provenance="published").exclude(pk=run.pk).first()


def board_range(client, run) -> tuple[str, str]:
    """The two readings the board's row for `run` shows."""
    board = client.get(BOARD).content.decode()
    at = board.index(f'href="/runs/{run.pk}/"')
    [shown] = RANGE.findall(board[at - 3000 : at])
    return shown


def board_record(client, run) -> dict:
    """The board's JSON export's row for `run`."""
    [record] = [r for r in client.get(f"{BOARD}&format=json").json() if r["run_id"] == run.pk]
    return record


def test_the_board_compare_and_deployment_pages_show_the_same_two_readings(client, wafer):
    run, other = wafer
    on_board = board_range(client, run)
    # The figure states neither interactivity nor a TTFT percentile, so /compare/'s answer is
    # asked without those bounds (with them, no point of it meets, and the page says so).
    compare = client.get(
        f"/compare/?d={run.deployment_id}&d={other.deployment_id}&scenario=seed-20k-1k-60"
        "&interactivity_min=none&ttft_p99_s_max=none"
    ).content.decode()
    assert on_board in RANGE.findall(compare)
    # No ratio is drawn from one of two readings.
    assert "×1.00" not in compare.split("tok/s/GPU at SLO")[1].split("</tr>")[0]
    history = client.get(f"/deployments/{run.deployment_id}/").content.decode()
    assert on_board in RANGE.findall(history)


def test_costs_its_exports_and_the_api_read_the_figure_as_the_board_does(client, wafer):
    run, _ = wafer
    on_board = board_record(client, run)
    assert on_board["tok_s_kind"] == "unstated" and on_board["tok_s_per_gpu_range"]
    # The throughput-only tier bounds no latency: the figure is priced as published, on the
    # board's price tier and basis (the default tier bounds a TTFT p99 it does not state).
    query = "model=GLM 5.2&slo=throughput"
    page = client.get(f"/costs/?{query}").content.decode()
    row = page[page.index(f'<tr class="row-main" data-run="{run.pk}"') :].split("</tr>")[0]
    assert board_range(client, run) in RANGE.findall(row)
    for records in (
        client.get(f"/costs/export.json?{query}").json()["rows"],
        client.get(f"/api/v1/costs/procurement?{query}").json()["rows"],
    ):
        [mine] = [r for r in records if r["run_id"] == run.pk]
        assert mine["tok_s_kind"] == "unstated"
        assert mine["tok_s_per_gpu_range"] == on_board["tok_s_per_gpu_range"]
        assert mine["usd_per_mtok_range"] == on_board["usd_per_mtok_range"]
        # One figure ranks and plans it, as the board's: the lower reading (never read up).
        assert mine["usd_per_mtok"] == pytest.approx(on_board["usd_per_mtok_output"])
        assert mine["tok_per_s_per_gpu_at_slo"] == pytest.approx(on_board["tok_s_per_gpu"])


def test_the_run_cost_api_reads_the_figure_as_the_board_does(client, wafer):
    run, _ = wafer
    on_board = board_record(client, run)
    body = client.get(
        f"/api/v1/costs/runs/{run.pk}/slo?min_success_pct=0&tier=owning_hyperscaler"
    ).json()
    assert body["tok_s_kind"] == "unstated"
    assert body["tok_s_per_gpu_range"] == on_board["tok_s_per_gpu_range"]
    assert body["usd_per_mtok_range"] == on_board["usd_per_mtok_range"]


def test_the_run_page_and_the_compare_csv_read_it_as_the_board_does(client, wafer):
    run, other = wafer
    low, high = board_range(client, run)
    run_page = client.get(f"/runs/{run.pk}/?scenario=seed-20k-1k-60").content.decode()
    assert f'{low}–{high} <span class="flag">kind unstated' in run_page
    row = board_record(client, run)
    # The export carries the answer's point only; at the throughput-only tier it has one.
    csv = client.get(
        f"/compare/?d={run.deployment_id}&d={other.deployment_id}&scenario=seed-20k-1k-60"
        "&slo=throughput&format=csv"
    ).content.decode()
    assert row["tok_s_per_gpu_range"] in csv and row["usd_per_mtok_range"] in csv
