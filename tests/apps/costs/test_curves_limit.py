"""The cost pages price the newest runs that have load points: evaluation-only runs (most of
a model's newest runs in the InferenceX history) never take a place in the limit."""

from __future__ import annotations

import pytest

from apps.costs import selectors
from apps.costs.formulas import TokenKind
from tests.factories import document
from tests.reviews import ingest_reviewed

pytestmark = pytest.mark.django_db

GSM = {"protocol": "gsm8k-5shot-v1", "task": "gsm8k", "metric": "exact_match_numeric"}


def test_evaluation_only_runs_do_not_crowd_load_runs_out_of_the_limit(org):
    loaded = [
        ingest_reviewed(document=document(engine_version=f"0.5.{n}"), org=org, is_public=True).run
        for n in range(2)
    ]
    for n in range(3):  # newer than both load runs, with nothing to price
        evaluation = document(engine_version=f"0.6.{n}", accuracy=[{**GSM, "n": 100, "score": 0.9}])
        evaluation["points"] = []
        ingest_reviewed(document=evaluation, org=org, is_public=True)

    curves = selectors.deployment_curves(org=None, kind=TokenKind.OUTPUT, limit=2)

    assert sorted(curve.run_id for curve in curves) == sorted(run.pk for run in loaded)
