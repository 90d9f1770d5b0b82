"""A cancelled run's file imports what it measured, as a partial run; one that measured nothing
is refused by name (issue 59). Real aiperf exports of InferenceX agentic runs that aiperf
cancelled (tests/fixtures/wild/SOURCES.md)."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from apps.imports.management.commands.importresults import Command
from apps.runs.models import Point, Run

pytestmark = pytest.mark.django_db

WILD = Path(__file__).resolve().parents[2] / "fixtures" / "wild" / "aiperf"
CANCELLED = next(WILD.glob("agentic_kimik2.5_tp8_conc16_*b200-dgxc_03_profile_export_aiperf.json"))
NOTHING = next(WILD.glob("agentic_kimik2.5_tp8_conc32_*b200-dgxc_05_profile_export_aiperf.json"))
# The run folder names B200, TP8, vLLM and FP4 weights.
FLAGS = ("--accelerator", "B200", "--gpus", "8", "--engine", "vllm", "--weights", "FP4")


def importresults(path: Path) -> str:
    out = StringIO()
    call_command(Command(), str(path), *FLAGS, stdout=out)
    return out.getvalue()


def test_a_cancelled_aiperf_run_is_stored_partial_with_its_failures_counted(client):
    raw = json.loads(CANCELLED.read_text())
    assert raw["was_cancelled"] is True
    importresults(CANCELLED)
    run = Run.objects.get()
    point = Point.objects.get(run=run)
    assert run.status == Run.Status.PARTIAL
    # request_count counts successes, error_request_count failures; completed is their sum.
    assert (point.requests_succeeded, point.requests_failed) == (
        raw["request_count"]["avg"],
        raw["error_request_count"]["avg"],
    )
    assert point.requests_total == raw["completed_request_count"]["avg"]
    assert point.ttft_p50_ms == raw["time_to_first_token"]["p50"]
    assert run.document["stopped_early"] == "aiperf reports was_cancelled: true"
    assert "run_complete" in [f["rule"] for f in run.rules_failed] and not run.rules_passed
    html = client.get(f"/runs/{run.pk}/").content.decode()
    assert "stopped early: aiperf reports was_cancelled: true" in html


def test_a_cancelled_run_that_measured_nothing_is_refused_by_name_and_stores_nothing():
    raw = json.loads(NOTHING.read_text())
    assert raw["was_cancelled"] is True and "request_count" not in raw
    with pytest.raises(CommandError, match="cancelled .* before any request succeeded .32 failed"):
        importresults(NOTHING)
    assert Run.objects.count() == 0
