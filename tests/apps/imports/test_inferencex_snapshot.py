"""The shipped reference data with InferenceX's snapshot, stored by `loadreference` once for
the tests that read all of it: every row with its own figures (tests/apps/imports), the
history's change points on the regressions page (apps/regressions). Storing it is the
largest single cost the suite repeats; the sync's tests (test_inferencex_dataset.py) start
from an empty database and store it themselves."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.core.management import call_command
from django.db import transaction

from apps.accuracy.models import AccuracyResult
from apps.catalog.reference import INFERENCEX_DIR
from apps.regressions.models import ChangePoint
from apps.runs.models import Point, Run
from workers.importers import inferencex_api
from workers.importers.engines import engine_name

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def snapshot_loaded(django_db_setup, django_db_blocker):
    """`loadreference` once, in a transaction rolled back after this module's tests. Each
    test's own transaction is a savepoint inside it, so what one test writes (a second
    `loadreference`, say) is undone before the next, and the data outlives no test here."""
    with django_db_blocker.unblock(), transaction.atomic():
        call_command("loadreference", verbosity=0)
        yield
        transaction.set_rollback(True)


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


def test_loadreference_stores_every_inferencex_row_with_its_own_figures_once(snapshot_loaded):
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
        assert deployment.engine.name == engine_name(r["framework"]), where  # trt: trtllm
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
        # Per-GPU figures as written, from the stored totals: a disaggregated row's output
        # is per decode GPU, its input per prefill GPU, its total per GPU of both pools.
        over = {
            "tput_per_gpu": gpus,
            "output_tput_per_gpu": r["num_decode_gpu"] if r["disagg"] else gpus,
            "input_tput_per_gpu": r["num_prefill_gpu"] if r["disagg"] else gpus,
        }
        for theirs, ours in inferencex_api.THROUGHPUTS.items():
            value = getattr(point, ours)
            if theirs in metrics:
                assert value / over[theirs] == pytest.approx(metrics[theirs], rel=1e-12), where
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


def test_loadreference_finds_the_historys_change_points_and_the_page_lists_them(
    snapshot_loaded, client
):
    points = ChangePoint.objects.filter(current=True, org__isnull=True)
    assert points.count() > 0
    for cp in points[:50]:
        before, after = Run.objects.get(pk=cp.before_run_id), Run.objects.get(pk=cp.after_run_id)
        # Both sides are InferenceX runs of one configuration, the later one after the change.
        assert before.source_tool == after.source_tool == inferencex_api.TOOL
        assert before.started_at < after.started_at
        assert cp.last_before_at == before.started_at and cp.first_after_at == after.started_at
        assert cp.relative_low <= cp.relative <= cp.relative_high
        assert cp.before_runs[-1] == cp.before_run_id and cp.after_runs[0] == cp.after_run_id
    page = client.get("/regressions/?model=DeepSeek-R1-0528").content.decode()
    listed = re.findall(r'href="/regressions/(\d+)/"', page)
    assert listed and set(map(int, listed)) <= set(points.values_list("pk", flat=True))
    first = points.filter(deployment__model__name="DeepSeek-R1-0528").first()
    assert f">{first.first_after_at:%Y-%m-%d}</time>" in page
    assert f'href="/runs/{first.after_run_id}/"' in page
