"""Migration 0017 re-derives the stored throughputs of disaggregated InferenceX runs from the
per-GPU figures they keep as written: output over the decode pool, input over the prefill
pool, total over both (issue 51); every other run is left as it was."""

from __future__ import annotations

import json

import pytest

from apps.catalog.reference import INFERENCEX_DIR
from apps.runs.models import Point, Run
from apps.runs.services import run_ingest
from tests.apps.runs.migrating import migrate_runs
from workers.importers import inferencex_api

COLUMNS = ("output_tok_s", "input_tok_s", "total_tok_s")


def _documents() -> tuple[dict, dict]:
    """A disaggregated run with pools of different sizes and an aggregated one, as imported."""
    rows = json.loads((INFERENCEX_DIR / "benchmarks.json").read_bytes())
    read = inferencex_api.benchmark_rows(rows, "latest")
    documents = inferencex_api.document_rows(read, source=inferencex_api.Source("test"))
    split = next(
        d
        for d in documents
        if d.deployment.disaggregation
        and d.deployment.disaggregation.prefill_gpus != d.deployment.disaggregation.decode_gpus
    )
    whole = next(d for d in documents if not d.deployment.disaggregation)
    return split.to_json_dict(), whole.to_json_dict()


def _as_stored_before(run: Run) -> None:
    """The run as the importer stored it before: every per-GPU figure times both pools."""
    gpus = run.deployment.gpus
    kept = run.environment["extra"]["inferencex"]["figures_as_written"]
    for point in run.points.all():
        per_gpu = kept[str(point.concurrency)]["per_gpu"]
        point.output_tok_s = per_gpu["output_tput_per_gpu"] * gpus
        point.input_tok_s = per_gpu["input_tput_per_gpu"] * gpus
        point.total_tok_s = per_gpu["tput_per_gpu"] * gpus
        point.save()
        run.document["points"][point.ordinal]["throughput"].update(
            {c: getattr(point, c) for c in COLUMNS}
        )
    run.save()


@pytest.mark.django_db(transaction=True)  # DDL after rows: no deferred checks pending
def test_the_migration_puts_disaggregated_runs_on_their_pools_denominators(org, capsys):
    split_doc, whole_doc = _documents()
    split = run_ingest(document=split_doc, org=org).run
    whole = run_ingest(document=whole_doc, org=org).run
    imported = {p.ordinal: {c: getattr(p, c) for c in COLUMNS} for p in split.points.all()}
    untouched = list(whole.points.values_list(*COLUMNS))
    _as_stored_before(split)
    assert list(split.points.values_list("output_tok_s", flat=True)) != [
        imported[o]["output_tok_s"] for o in sorted(imported)
    ]
    migrate_runs("0016_run_levels")
    migrate_runs()
    stored = Run.objects.get(pk=split.pk)
    pools = split_doc["deployment"]["disaggregation"]
    p, d = pools["prefill_gpus"], pools["decode_gpus"]
    kept = stored.environment["extra"]["inferencex"]["figures_as_written"]
    for point in Point.objects.filter(run=stored):
        per_gpu = kept[str(point.concurrency)]["per_gpu"]
        assert point.output_tok_s == pytest.approx(per_gpu["output_tput_per_gpu"] * d)
        assert point.input_tok_s == pytest.approx(per_gpu["input_tput_per_gpu"] * p)
        assert point.total_tok_s == pytest.approx(per_gpu["tput_per_gpu"] * (p + d))
        # What a fresh import stores, in the Point row and in the stored document alike.
        assert {c: getattr(point, c) for c in COLUMNS} == pytest.approx(imported[point.ordinal])
        throughput = stored.document["points"][point.ordinal]["throughput"]
        assert {c: throughput[c] for c in COLUMNS} == pytest.approx(imported[point.ordinal])
        assert kept[str(point.concurrency)]["per_gpu_over"]["output_tput_per_gpu"] == (
            "decode GPUs"
        )
    best = Point.objects.get(pk=stored.best_point_id)
    assert stored.best_tput_per_gpu == pytest.approx(best.output_tok_s / (p + d))
    assert list(Point.objects.filter(run=whole).values_list(*COLUMNS)) == untouched
    assert "0017: 1 disaggregated InferenceX run(s)" in capsys.readouterr().out
