"""One large run must not slow everyone: lists never read stored documents."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

pytestmark = pytest.mark.django_db


def test_run_lists_never_load_a_runs_document_or_environment(client, auth, document):
    document["environment"]["extra"] = {"blob": "x" * 500_000}
    answer = client.post(
        "/api/v1/runs", data=json.dumps(document), content_type="application/json", **auth
    )
    assert answer.status_code == 201, answer.content
    for url in ("/api/v1/runs", "/runs/"):
        with CaptureQueriesContext(connection) as queries:
            assert client.get(url).status_code == 200
        selects = [q["sql"] for q in queries.captured_queries if "runs_run" in q["sql"]]
        assert selects
        assert not [sql for sql in selects if '"runs_run"."document"' in sql], url
        assert not [sql for sql in selects if '"runs_run"."environment"' in sql], url


def test_environment_extra_over_its_limit_gets_422_naming_it(client, auth, document):
    from workers.result_fields import MAX_EXTRA_BYTES

    document["environment"]["extra"] = {"blob": "x" * MAX_EXTRA_BYTES}
    answer = client.post(
        "/api/v1/runs", data=json.dumps(document), content_type="application/json", **auth
    )
    assert answer.status_code == 422
    assert answer.json()["detail"][0]["path"] == "environment.extra"
