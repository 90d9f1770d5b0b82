from django.db import migrations


def rejudge_runs(apps, schema_editor):
    """Choose every stored run's leaderboard point again, by the one SLO rule."""
    from apps.runs import summary

    Run = apps.get_model("runs", "Run")
    Point = apps.get_model("runs", "Point")
    for run in Run.objects.select_related("scenario", "deployment").iterator():
        # The columns of this schema: client_bound (0014) is read from the document here.
        fields = [f for f in summary.FIGURE_FIELDS if f != "client_bound"]
        rows = list(Point.objects.filter(run=run).values("id", *fields))
        best = summary.best_point(
            summary.run_figures(rows, run.document),
            summary.scenario_slo(run.scenario),
            run.deployment.gpus,
        )
        Run.objects.filter(pk=run.pk).update(
            best_point_id=best.point_id if best else None,
            best_tput_per_gpu=best.tput_per_gpu if best else None,
            best_meets_slo=best.meets_slo if best else None,
        )


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0003_scenario_slo_bounds"),
        ("runs", "0004_request_record_without_db_constraint"),
    ]

    operations = [migrations.RunPython(rejudge_runs, migrations.RunPython.noop)]
