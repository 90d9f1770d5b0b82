"""An accuracy result keeps its run's deployment (apps/accuracy/models.py): stored with it,
and filled from the run for results stored before the column existed (migration 0002)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from apps.accuracy.models import AccuracyResult
from apps.runs.services import run_ingest
from tests.factories import document


def _migrate_accuracy(target: str) -> None:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([("accuracy", target)])


@pytest.mark.django_db
def test_a_stored_result_keeps_its_runs_deployment(org):
    run = run_ingest(document=document(quantization="FP8"), org=org).run

    results = list(AccuracyResult.objects.filter(run=run))

    assert results and {r.deployment_id for r in results} == {run.deployment_id}


@pytest.mark.django_db(transaction=True)  # DDL after rows: no deferred checks pending
def test_the_migration_fills_each_results_deployment_from_its_run(org):
    fp8 = run_ingest(document=document(quantization="FP8"), org=org).run
    fp4 = run_ingest(document=document(quantization="FP4", accelerator="B200"), org=org).run
    assert fp8.deployment_id != fp4.deployment_id
    try:
        _migrate_accuracy("0001_initial")  # the column is gone, the results stay
        _migrate_accuracy("0003_result_deployment_required")
    finally:
        leaf = MigrationExecutor(connection).loader.graph.leaf_nodes("accuracy")[0]
        _migrate_accuracy(leaf[1])

    filled = dict(AccuracyResult.objects.values_list("run_id", "deployment_id"))

    assert filled == {fp8.pk: fp8.deployment_id, fp4.pk: fp4.deployment_id}
