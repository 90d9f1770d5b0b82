"""Disaggregated InferenceX runs' throughputs on the source's own denominators (issue 51).

InferenceX states a disaggregated row's output tok/s per DECODE GPU, its input tok/s per
PREFILL GPU and only its total per GPU of both pools (workers/importers/inferencex_api.py,
POOL_OF, citing process_result.py). The importer multiplied all three by both pools, so the
stored output of such a run was (P+D)/D times what was measured and its input (P+D)/P. Each
stored point is re-derived from the per-GPU figures the run keeps as written
(`environment.extra.inferencex.figures_as_written[<conc>].per_gpu`), in its Point row and in
the stored document, and each changed run's leaderboard point is chosen again. Aggregated runs,
and runs of any other source, are left as they are. Prints how many runs and points changed.
"""

from django.db import migrations

TOOL = "InferenceX API"
# As the importer reads them (inferencex_pools.THROUGHPUTS, POOL_OF); spelt here so the
# migration keeps meaning what it meant when the importer changes.
COLUMNS = {
    "tput_per_gpu": "total_tok_s",
    "output_tput_per_gpu": "output_tok_s",
    "input_tput_per_gpu": "input_tok_s",
}
POOLS = {
    "tput_per_gpu": ("prefill_gpus", "decode_gpus"),
    "output_tput_per_gpu": ("decode_gpus",),
    "input_tput_per_gpu": ("prefill_gpus",),
}
WORDS = {
    "tput_per_gpu": "all GPUs (prefill + decode)",
    "output_tput_per_gpu": "decode GPUs",
    "input_tput_per_gpu": "prefill GPUs",
}


def rederive(apps, schema_editor):
    from apps.runs import summary

    Run = apps.get_model("runs", "Run")
    Point = apps.get_model("runs", "Point")
    runs = (
        Run.objects.filter(source_tool=TOOL, deployment__disaggregated=True)
        .select_related("deployment", "scenario")
        .order_by("pk")
    )
    changed_runs = changed_points = 0
    for run in runs.iterator(chunk_size=200):
        pools = {
            "prefill_gpus": run.deployment.prefill_gpus,
            "decode_gpus": run.deployment.decode_gpus,
        }
        if not all(pools.values()):
            continue
        written = ((run.environment or {}).get("extra") or {}).get("inferencex") or {}
        figures = written.get("figures_as_written") or {}
        doc_points = (run.document or {}).get("points") or []
        points = list(Point.objects.filter(run=run).order_by("ordinal"))
        touched = []
        for point in points:
            per_gpu = (figures.get(str(point.concurrency)) or {}).get("per_gpu") or {}
            new = {
                column: per_gpu[theirs] * sum(pools[p] for p in POOLS[theirs])
                for theirs, column in COLUMNS.items()
                if per_gpu.get(theirs) is not None
            }
            if all(getattr(point, c) == v for c, v in new.items()):
                continue
            for column, value in new.items():
                setattr(point, column, value)
            touched.append(point)
            if point.ordinal < len(doc_points):
                doc_points[point.ordinal].setdefault("throughput", {}).update(new)
        if not touched:
            continue
        # The pool each kept figure is over, as the importer now labels it, in the run's
        # environment and in its stored document alike.
        for environment in (run.environment, (run.document or {}).get("environment")):
            extra = ((environment or {}).get("extra") or {}).get("inferencex") or {}
            for kept in (extra.get("figures_as_written") or {}).values():
                if isinstance(kept, dict) and "per_gpu" in kept:
                    kept["per_gpu_over"] = {k: WORDS[k] for k in kept["per_gpu"] if k in WORDS}
        Point.objects.bulk_update(touched, list(COLUMNS.values()))
        rows = list(
            Point.objects.filter(run=run).order_by("ordinal").values("id", *summary.FIGURE_FIELDS)
        )
        best = summary.best_point(
            summary.run_figures(rows, run.document),
            summary.default_slo(run.scenario),
            run.deployment.gpus,
            summary.scenario_shape(run.scenario),
        )
        run.best_point_id = best.point_id if best else None
        run.best_tput_per_gpu = best.tput_per_gpu if best else None
        run.best_meets_slo = best.meets_slo if best else None
        run.save(
            update_fields=[
                "document",
                "environment",
                "best_point",
                "best_tput_per_gpu",
                "best_meets_slo",
            ]
        )
        changed_runs += 1
        changed_points += len(touched)
    if changed_runs:
        print(
            f"\n  0017: {changed_runs} disaggregated InferenceX run(s), {changed_points} point(s) "
            "re-derived on their pools' denominators"
        )


class Migration(migrations.Migration):
    dependencies = [("runs", "0016_run_levels")]

    operations = [migrations.RunPython(rederive, migrations.RunPython.noop)]
