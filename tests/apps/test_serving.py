"""The production web process (apps/serving.py) against the test PostgreSQL: its requests
share a bounded pool of connections, and an idle agent's long poll holds none of them."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import httpx
import psycopg
import pytest
from django.db import connection

from tests.production import suite_database_url
from tests.waits import wait_for

pytestmark = pytest.mark.django_db(transaction=True)

APP_NAME = "inferboard-pool-test"


@pytest.fixture
def pooled_server(production_server, org, issued) -> tuple[str, dict[str, str]]:
    # Without Redis, as the pool's own deployment runs it: every poll check reads the database.
    url = production_server(
        DATABASE_URL=f"{suite_database_url()}?application_name={APP_NAME}",
        REDIS_URL=None,
        CELERY_BROKER_URL=None,
    )
    return url, {"Authorization": f"Bearer {issued.plaintext}"}


def _app_connections() -> int:
    db = connection.settings_dict
    with psycopg.connect(
        host=db["HOST"], port=db["PORT"], user=db["USER"], dbname=db["NAME"], autocommit=True
    ) as admin:
        query = "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s"
        return admin.execute(query, (APP_NAME,)).fetchone()[0]


def _polls_started() -> int:
    """Reads of the pools table PostgreSQL has counted (its per-table scan statistics): a long
    poll reads its pool once, then goes straight into its wait loop, so two more reads than
    before mean both polls are waiting. A backend flushes these counters within a second."""
    from apps.jobs.models import Pool

    db = connection.settings_dict
    with psycopg.connect(
        host=db["HOST"], port=db["PORT"], user=db["USER"], dbname=db["NAME"], autocommit=True
    ) as admin:
        query = (
            "SELECT coalesce(seq_scan, 0) + coalesce(idx_scan, 0) FROM pg_stat_user_tables"
            " WHERE relname = %s"
        )
        return admin.execute(query, (Pool._meta.db_table,)).fetchone()[0]


def test_concurrent_requests_share_a_bounded_pool_of_connections(pooled_server):
    url, auth = pooled_server

    def list_runs(n: int) -> int:
        # Unknown filters are never cached, so every request reads the database.
        return httpx.get(f"{url}/api/v1/runs?model=m{n}", headers=auth, timeout=120).status_code

    seen = 0
    with ThreadPoolExecutor(16) as clients:
        futures = [clients.submit(list_runs, n) for n in range(64)]
        while not all(future.done() for future in futures):
            seen = max(seen, _app_connections())
    assert [future.result() for future in futures] == [200] * 64
    assert seen <= 2  # never more than the pool, though 16 ask at once
    # The pool keeps its connections open between requests (one opened per request would be
    # closed again by now).
    assert 1 <= _app_connections() <= 2


def test_an_agent_waiting_for_a_job_holds_no_connection(pooled_server, org):
    from apps.jobs.services import pool_create

    url, auth = pooled_server
    pool = pool_create(org=org, name="pool.waiting").name
    before = _polls_started()
    # With a pool of two, two idle agents polling for 15 s would hold both connections, and a
    # read would wait for a poll to end.
    with ThreadPoolExecutor(2) as agents:
        polls = [
            agents.submit(
                httpx.post,
                f"{url}/api/v1/agent/claim",
                params={"pool": pool, "wait": 15},
                headers=auth,
                timeout=60,
            )
            for _ in range(2)
        ]
        # The event waited on: the server has read each poll's pool, so both are in their
        # wait loop, where a held connection would starve the read below.
        wait_for(lambda: _polls_started() >= before + 2, 30, "both polls to be waiting")
        answer = httpx.get(f"{url}/api/v1/runs", headers=auth, timeout=60)
        assert answer.status_code == 200
        assert not any(poll.done() for poll in polls), "the read waited for a poll to end"
        assert [poll.result().status_code for poll in polls] == [204, 204]


@pytest.mark.django_db(transaction=False)
def test_a_loaded_worker_leaves_its_start_up_objects_out_of_full_collections(monkeypatch):
    import gc

    # Importing the gunicorn settings sets DB_POOL_SIZE's default in the environment: kept
    # to this test, so later ones read the environment they were given.
    monkeypatch.setenv("DB_POOL_SIZE", os.environ.get("DB_POOL_SIZE", "10"))
    from apps.serving import post_worker_init

    gc.unfreeze()
    try:
        post_worker_init(worker=None)
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
