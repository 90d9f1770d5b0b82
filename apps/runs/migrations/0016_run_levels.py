import django.db.models.functions.comparison
from django.db import migrations, models
from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Coalesce


def count_levels(apps, schema_editor):
    """Each run's load levels (its points), which the board's row rule compares."""
    Run = apps.get_model("runs", "Run")
    Point = apps.get_model("runs", "Point")
    counted = (
        Point.objects.filter(run=OuterRef("pk"))
        .order_by()
        .values("run")
        .annotate(n=Count("id"))
        .values("n")[:1]
    )
    Run.objects.update(levels=Coalesce(Subquery(counted), 0))


def rechoose_success_not_stated(apps, schema_editor):
    """Choose again the leaderboard point of runs with a point that states no success rate in
    a scenario with an SLO: such a point was "cannot check", and is now judged on its bounds
    and marked "success not stated" (workers/slo.py)."""
    from apps.runs import summary

    Run = apps.get_model("runs", "Run")
    Point = apps.get_model("runs", "Point")
    runs = (
        Run.objects.filter(points__success_rate__isnull=True, scenario__isnull=False)
        .select_related("scenario", "deployment")
        .distinct()
    )
    for run in runs.iterator():
        slo = summary.scenario_slo(run.scenario)
        if not slo.any:
            continue
        rows = list(Point.objects.filter(run=run).values("id", *summary.FIGURE_FIELDS))
        best = summary.best_point(
            summary.run_figures(rows, run.document),
            slo,
            run.deployment.gpus,
            summary.scenario_shape(run.scenario),
        )
        Run.objects.filter(pk=run.pk).update(
            best_point_id=best.point_id if best else None,
            best_tput_per_gpu=best.tput_per_gpu if best else None,
            best_meets_slo=best.meets_slo if best else None,
        )


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0005_token_created_by"),
        ("catalog", "0005_deployment_disaggregation"),
        ("runs", "0015_best_point_reads_unstated_kind_once"),
    ]

    operations = [
        migrations.AddField(
            model_name="run",
            name="levels",
            field=models.PositiveSmallIntegerField(default=0),
        ),
        migrations.AddIndex(
            model_name="run",
            index=models.Index(
                models.F("scenario"),
                models.F("deployment"),
                models.OrderBy(models.F("levels"), descending=True),
                models.OrderBy(
                    django.db.models.functions.comparison.Coalesce("started_at", "created_at"),
                    descending=True,
                ),
                models.OrderBy(models.F("id"), descending=True),
                name="runs_run_sweep_idx",
            ),
        ),
        # After the index: the updates fire the run tally's triggers (0012), and PostgreSQL
        # creates no index on a table with trigger events pending in the transaction.
        migrations.RunPython(count_levels, migrations.RunPython.noop),
        migrations.RunPython(rechoose_success_not_stated, migrations.RunPython.noop),
    ]
