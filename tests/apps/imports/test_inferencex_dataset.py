"""InferenceX's published results on the board: the shipped snapshot (loadreference) and the
sync from a loopback server that serves InferenceX's API routes."""

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

from apps.accuracy.models import AccuracyResult
from apps.catalog.reference import INFERENCEX_DIR
from apps.imports.models import SyncRun
from apps.imports.services import inferencex_sync
from apps.runs.models import Point, Run
from workers.importers import inferencex_api

pytestmark = pytest.mark.django_db

LATENCIES = {"ttft": "ttft", "tpot": "tpot", "itl": "itl", "e2el": "e2el"}
SLOTS = {"mean": "mean", "median": "p50", "std": "std", "p90": "p90", "p99": "p99"}
SLOTS["p99.9"] = "p999"


def snapshot(name: str) -> list[dict[str, Any]]:
    return json.loads((INFERENCEX_DIR / name).read_bytes())


def stored_points() -> dict[str, tuple[Run, Point]]:
    """Each stored InferenceX row's key -> its run and point (rows are listed by concurrency,
    as the points are)."""
    found = {}
    runs = Run.objects.filter(source_tool=inferencex_api.TOOL, scenario__isnull=False)
    for run in runs.prefetch_related("points"):
        keys = run.environment["extra"]["inferencex"]["rows"]
        points = sorted(run.points.all(), key=lambda p: p.concurrency)
        assert len(keys) == len(points)
        found.update({key: (run, point) for key, point in zip(keys, points, strict=True)})
    return found


def expected_latency(metrics: dict[str, float]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for stat, slot in SLOTS.items():
        for theirs, ours in LATENCIES.items():
            if f"{stat}_{theirs}" in metrics:
                out.setdefault(ours, {})[slot] = metrics[f"{stat}_{theirs}"] * 1000
    return out


def test_loadreference_stores_every_inferencex_row_with_its_own_figures_once():
    call_command("loadreference", verbosity=0)
    latest = inferencex_api.benchmark_rows(snapshot("benchmarks.json"), "latest")
    history = inferencex_api.benchmark_rows(snapshot("benchmarks-history.json"), "history")
    rows = {row.key: row for row in inferencex_api.merged(latest, history)}
    stored = stored_points()
    # The 230 rows both responses hold are one row each: 435 + 1,462 - 230.
    assert len(rows) == 1_667 and set(stored) == set(rows)
    for key, row in rows.items():
        run, point = stored[key]
        r, metrics, deployment = row.row, row.row["metrics"], run.deployment
        where = f"{r['hardware']} {r['framework']} conc {r['conc']} {r['date']}"
        # Both pools when disaggregated; TP when not (InferenceX's per-GPU figures are per TP
        # GPU; its num_decode_gpu is TP x EP: workers/importers/inferencex_api.py).
        gpus = r["num_prefill_gpu"] + r["num_decode_gpu"] if r["disagg"] else r["decode_tp"]
        assert deployment.gpus == gpus, where
        assert deployment.accelerator.sku == r["hardware"].upper(), where
        assert deployment.engine.name == r["framework"], where
        assert deployment.quant_weights == r["precision"].upper(), where
        assert deployment.disaggregated == r["disagg"], where
        assert deployment.multinode == r["is_multinode"], where
        assert deployment.spec_method == ("" if r["spec_method"] == "none" else r["spec_method"])
        if r["disagg"]:
            assert (deployment.prefill_gpus, deployment.decode_gpus) == (
                r["num_prefill_gpu"],
                r["num_decode_gpu"],
            )
            assert deployment.prefill_workers == (r["prefill_num_workers"] or None), where
            assert deployment.decode_workers == (r["decode_num_workers"] or None), where
        else:
            assert (deployment.tp, deployment.ep) == (r["decode_tp"], r["decode_ep"]), where
        assert (run.scenario.input_tokens, run.scenario.output_tokens) == (r["isl"], r["osl"])
        assert run.started_at.date().isoformat() == r["date"], where
        assert run.source_url == r["run_url"] and r["run_url"] in run.source_citation
        assert point.concurrency == r["conc"], where
        # Per-GPU figures as written, from the stored totals.
        for theirs, ours in inferencex_api.THROUGHPUTS.items():
            value = getattr(point, ours)
            if theirs in metrics:
                assert value / gpus == pytest.approx(metrics[theirs], rel=1e-12), where
            else:
                assert value is None, where
        # Every latency statistic the row states, in ms; none it does not state.
        latency = {
            metric: {k: v for k, v in dist.items() if k != "method"}
            for metric, dist in point.latency_ms.items()
        }
        assert latency == expected_latency(metrics), where
        assert point.interactivity_p50 == metrics.get("median_intvty"), where
        # Nothing the row does not state: no success rate, request counts or window.
        assert (point.success_rate, point.requests_total, point.window_s) == (None, None, None)
        kept = run.environment["extra"]["inferencex"]["figures_as_written"][str(r["conc"])]
        for name in inferencex_api.KEPT_AS_WRITTEN & set(metrics):
            assert kept[name] == metrics[name], where
    evaluations = snapshot("evaluations.json")
    results = AccuracyResult.objects.filter(run__source_tool=inferencex_api.TOOL)
    assert results.filter(metric="em_strict").count() == len(evaluations) == 531
    first = results.get(metric="em_strict", run__environment__extra__inferencex__id="7439")
    assert (first.n, first.score) == (1319, evaluations[0]["metrics"]["em_strict"])

    before = (Run.objects.count(), Point.objects.count(), AccuracyResult.objects.count())
    call_command("loadreference", verbosity=0)
    assert (Run.objects.count(), Point.objects.count(), AccuracyResult.objects.count()) == before


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
