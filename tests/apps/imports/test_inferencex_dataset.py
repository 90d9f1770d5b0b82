"""InferenceX's published results on the board: the sync from a loopback server that serves
InferenceX's API routes (the shipped snapshot stored by loadreference:
test_inferencex_snapshot.py)."""

from __future__ import annotations

import contextlib
import copy
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from apps.catalog.reference import INFERENCEX_DIR
from apps.imports.models import SyncRun
from apps.imports.services import inferencex_sync
from apps.runs.models import Run
from workers.importers import inferencex_api

pytestmark = pytest.mark.django_db


def snapshot(name: str) -> list[dict[str, Any]]:
    return json.loads((INFERENCEX_DIR / name).read_bytes())


# --- the sync ------------------------------------------------------------------------------


@contextlib.contextmanager
def inferencex_server(files: dict[str, list[Any]] | None) -> Iterator[str]:
    """A loopback server answering InferenceX's routes from `files` (None: every route
    answers a body that is not JSON), filtering history by isl/osl as the real route does."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server hook's name
            url = urlsplit(self.path)
            query = {k: v[0] for k, v in parse_qs(url.query).items()}
            if files is None:
                body: bytes = b"<html>maintenance</html>"
            elif url.path == "/api/v1/benchmarks":
                body = json.dumps(files["benchmarks.json"]).encode()
            elif url.path == "/api/v1/benchmarks/history":
                rows = [
                    r
                    for r in files["benchmarks-history.json"]
                    if (str(r["isl"]), str(r["osl"])) == (query["isl"], query["osl"])
                ]
                body = json.dumps(rows).encode()
            elif url.path == "/api/v1/evaluations":
                body = json.dumps(files["evaluations.json"]).encode()
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/api/v1"
    finally:
        server.shutdown()
        server.server_close()


def served_snapshot() -> dict[str, list[Any]]:
    return {
        name: snapshot(name)
        for name in ("benchmarks.json", "benchmarks-history.json", "evaluations.json")
    }


def test_the_sync_imports_the_snapshot_then_only_rows_that_are_new_or_changed():
    files = served_snapshot()
    with inferencex_server(files) as url:
        first = inferencex_sync(location=url)
        assert first.status == "succeeded", first.error
        assert (first.rows_new, first.accuracy_runs_created) == (1_667, 531)
        runs = Run.objects.count()

        again = inferencex_sync(location=url)
        assert (again.status, again.rows_new, again.runs_created) == ("succeeded", 0, 0)
        assert Run.objects.count() == runs

        # A newer snapshot: one row's throughput restated, one new row (a later date).
        changed = copy.deepcopy(files)
        restated = changed["benchmarks.json"][0]
        restated["metrics"]["tput_per_gpu"] *= 1.5
        added = copy.deepcopy(changed["benchmarks.json"][1])
        added["date"], added["run_url"] = "2026-06-20", added["run_url"] + "9"
        changed["benchmarks.json"].append(added)
        files.update(changed)
        third = inferencex_sync(location=url)
    assert (third.status, third.rows_new, third.runs_created) == ("succeeded", 2, 2)
    assert Run.objects.count() == runs + 2
    new_runs = Run.objects.filter(source_tool=inferencex_api.TOOL).order_by("-id")[:2]
    dates = sorted(run.started_at.date().isoformat() for run in new_runs)
    assert dates == sorted([restated["date"], "2026-06-20"])
    # The restated row is a new run of the deployment its first run belongs to, dated alike.
    [restated_run] = [run for run in new_runs if run.source_url == restated["run_url"]]
    earlier = Run.objects.filter(
        deployment=restated_run.deployment,
        source_url=restated["run_url"],
        started_at=restated_run.started_at,
    ).exclude(pk=restated_run.pk)
    assert earlier.exists()


def test_an_unreachable_or_malformed_source_fails_the_sync_and_stores_nothing():
    with inferencex_server(None) as url:
        malformed = inferencex_sync(location=url)
    assert malformed.status == SyncRun.Status.FAILED
    assert "/api/v1/benchmarks?model=DeepSeek-R1-0528: not JSON" in malformed.error
    unreachable = inferencex_sync(location=url)  # the server has stopped
    assert unreachable.status == SyncRun.Status.FAILED
    assert "unreachable" in unreachable.error
    # A row that breaks the rows' own rules fails the whole sync, naming the row.
    files = served_snapshot()
    files["benchmarks-history.json"][5]["metrics"]["p99_ttft"] = "fast"
    with inferencex_server(files) as url:
        bad_row = inferencex_sync(location=url)
    assert bad_row.status == SyncRun.Status.FAILED
    assert "metrics.p99_ttft should be a number, got 'fast'" in bad_row.error
    assert Run.objects.count() == 0
    with pytest.raises(CommandError, match="no such folder"):
        call_command("syncinferencex", "--source", "/nonexistent/inferencex")


def test_the_scheduler_syncs_only_when_a_source_is_set_and_the_last_sync_is_old(settings):
    from datetime import timedelta

    from django.utils import timezone

    from apps.imports.services import inferencex_sync_due

    settings.INFERENCEX_API_URL = ""
    assert inferencex_sync_due() is None
    files = {"benchmarks.json": snapshot("benchmarks.json")[:3]}
    files |= {"benchmarks-history.json": [], "evaluations.json": []}
    with inferencex_server(files) as url:
        settings.INFERENCEX_API_URL = url
        first = inferencex_sync_due()
        assert first is not None and first.status == "succeeded" and first.rows_new == 3
        assert inferencex_sync_due() is None  # synced moments ago
        later = timezone.now() + timedelta(seconds=settings.INFERENCEX_SYNC_EVERY_S + 1)
        assert inferencex_sync_due(now=later).rows_new == 0
