"""client_bound is a Point column (issue 41), and migration 0014 fills it for stored runs
from their documents, so the one validity rule reads the same answer for old runs."""

from __future__ import annotations

import pytest

from apps.runs.models import Point
from apps.runs.services import run_ingest
from tests.apps.runs.migrating import migrate_runs

pytestmark = pytest.mark.django_db


def test_it_stores_each_points_client_bound_as_the_document_states_it(document, org):
    document["points"][0]["client_bound"] = False
    document["points"][1]["client_bound"] = True
    run = run_ingest(document=document, org=org).run
    assert dict(run.points.values_list("ordinal", "client_bound")) == {0: False, 1: True}


@pytest.mark.django_db(transaction=True)  # DDL after rows: no deferred checks pending
def test_the_migration_fills_the_column_from_stored_documents(document, org):
    document["points"][0].pop("client_bound", None)
    document["points"][1]["client_bound"] = True
    run = run_ingest(document=document, org=org).run
    migrate_runs("0013_run_tally_ranked_by_rules")
    migrate_runs()  # the column was gone; the documents still said it
    assert dict(Point.objects.filter(run=run).values_list("ordinal", "client_bound")) == {
        0: None,  # not reported stays not reported
        1: True,
    }
