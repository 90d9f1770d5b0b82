"""InferenceX aggregates import with no facts at all and stand on the leaderboard beside
measured runs of the same config (real files from tests/fixtures/wild)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from apps.imports.services import import_ingest
from apps.leaderboard.selectors import Board, leaderboard_rows
from apps.runs.models import Run
from apps.runs.services import run_ingest

pytestmark = pytest.mark.django_db

WILD = Path(__file__).resolve().parents[2] / "fixtures" / "wild"
[KIMI_MI355X] = (WILD / "inferencex-agg").glob("agg_kimik2.5_1k1k_*_conc4_*.json")
[DSR1_B200] = (WILD / "inferencex-agentic").glob("agg_dsr1_tp4_users16_*.json")


def _import(path: Path) -> Run:
    outcome = import_ingest(data=path.read_bytes(), filename=path.name, org=None)
    [result] = outcome.results
    return result.run


def _measured_twin(run: Run) -> Run:
    """A measured run of the very same config and workload, as a worker would submit it."""
    document = dict(run.document)
    document.update(
        idempotency_key="measured-twin-of-" + str(run.pk),
        provenance="measured",
        source={"tool": "inferboard loadgen"},
    )
    return run_ingest(document=document, org=None).run


@pytest.mark.parametrize(
    ("path", "model", "sku"),
    [
        (KIMI_MI355X, "moonshotai/Kimi-K2.5", "MI355X"),
        (DSR1_B200, "nvidia/DeepSeek-R1-0528-FP4", "B200"),
    ],
)
def test_an_inferencex_aggregate_stands_beside_a_measured_run_of_its_config(path, model, sku):
    raw = json.loads(path.read_text())
    imported = _import(path)  # no YAML, no flags: the file states the deployment
    measured = _measured_twin(imported)
    assert measured.deployment_id == imported.deployment_id
    assert measured.scenario_id == imported.scenario_id

    # Without facts (no image digest, no flags) neither run passes the board's rules: the
    # default board leaves the deployment off and says so; the unchecked board lists it.
    default = leaderboard_rows(board=Board(model=model, scenario=imported.scenario.slug))
    assert (default.rows, default.unchecked_hidden) == ([], 1)
    board = Board(model=model, scenario=imported.scenario.slug, include_unchecked=True)
    page = leaderboard_rows(board=board)
    [row] = page.rows  # one deployment: the imported and the measured run share it
    assert row.accelerator == sku
    assert row.gpus == raw["tp"]
    assert row.engine == raw["framework"]
    assert set(page.run_ids) <= {imported.pk, measured.pk}
    expected = raw.get("output_tput_per_gpu")
    assert math.isclose(row.tput_per_gpu, expected, rel_tol=1e-12)
    deployment = imported.deployment
    assert (deployment.tp, deployment.ep, deployment.dp_attention) == (
        raw["tp"],
        raw["ep"],
        raw["dp_attention"] == "true",
    )
    assert deployment.spec_method == (raw.get("spec_decoding") or "none").replace("none", "")


def test_two_models_on_two_accelerators_import_without_facts():
    kimi, dsr1 = _import(KIMI_MI355X), _import(DSR1_B200)
    assert {kimi.deployment.accelerator.sku, dsr1.deployment.accelerator.sku} == {"MI355X", "B200"}
    assert kimi.deployment.model.name != dsr1.deployment.model.name
