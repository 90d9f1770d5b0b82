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


def rechoose_at_the_default_tier(apps, schema_editor):
    """Choose again every run's leaderboard point at its scenario's default SLO tier
    (apps/catalog/slo_tiers.py; the scenario's own SLO where it states one), the point every
    default view shows; a point that states no success rate is now judged on its bounds and
    marked "success not stated" (workers/slo.py). A few hundred runs a query."""
    from apps.runs import summary

    Run = apps.get_model("runs", "Run")
    Point = apps.get_model("runs", "Point")
    pks = list(Run.objects.filter(levels__gt=0).order_by("pk").values_list("pk", flat=True))
    for start in range(0, len(pks), 500):
        chunk = pks[start : start + 500]
        runs = list(
            Run.objects.filter(pk__in=chunk)
            .defer("document")
            .select_related("scenario", "deployment")
        )
        rows: dict[int, list] = {pk: [] for pk in chunk}
        points = Point.objects.filter(run_id__in=chunk).order_by("run_id", "ordinal")
        for row in points.values("run_id", "id", *summary.FIGURE_FIELDS):
            rows[row.pop("run_id")].append(row)
        for run in runs:
            best = summary.best_point(
                # Every row has client_bound (0014): the document is not read.
                summary.run_figures(rows[run.pk], {}),
                summary.default_slo(run.scenario),
                run.deployment.gpus,
                summary.scenario_shape(run.scenario),
            )
            run.best_point_id = best.point_id if best else None
            run.best_tput_per_gpu = best.tput_per_gpu if best else None
            run.best_meets_slo = best.meets_slo if best else None
        Run.objects.bulk_update(runs, ["best_point", "best_tput_per_gpu", "best_meets_slo"])


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
        migrations.RunPython(rechoose_at_the_default_tier, migrations.RunPython.noop),
    ]
