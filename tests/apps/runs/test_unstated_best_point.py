"""A run whose figures are of unstated token kind takes its leaderboard point by the lower
reading (workers.figures.throughput), at ingestion and, for stored runs, by migration 0015."""

from __future__ import annotations

import pytest

from apps.runs.models import Run
from apps.runs.services import run_ingest
from tests.apps.runs.migrating import migrate_runs

pytestmark = pytest.mark.django_db


def _unstated(document: dict) -> dict:
    for point in document["points"]:
        point["throughput"] = {"unlabelled_tok_s": point["throughput"]["output_tok_s"]}
    return document


def _lower_reading_per_gpu(document: dict, run: Run) -> float:
    """The run's chosen point read as total tokens: its output share, per GPU. (Within one
    run either reading picks the same point; the SLO, not the reading, decides which.)"""
    n_in, n_out = document["scenario"]["input_tokens"], document["scenario"]["output_tokens"]
    return run.best_point.unlabelled_tok_s * n_out / (n_in + n_out) / run.deployment.gpus


def test_ingestion_ranks_an_unstated_figure_at_its_lower_reading(document, org):
    run = run_ingest(document=_unstated(document), org=org).run
    run.refresh_from_db()
    assert run.best_tput_per_gpu == pytest.approx(_lower_reading_per_gpu(document, run))


@pytest.mark.django_db(transaction=True)  # DDL after rows: no deferred checks pending
def test_the_migration_rechooses_stored_runs_by_the_lower_reading(document, org):
    run = run_ingest(document=_unstated(document), org=org).run
    # What the old rule stored: the figure read as output tokens.
    as_output = run.best_point.unlabelled_tok_s / run.deployment.gpus
    Run.objects.filter(pk=run.pk).update(best_tput_per_gpu=as_output)
    migrate_runs("0014_point_client_bound")
    migrate_runs()
    run.refresh_from_db()
    assert run.best_tput_per_gpu == pytest.approx(_lower_reading_per_gpu(document, run))
