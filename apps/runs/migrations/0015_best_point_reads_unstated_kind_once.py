from django.db import migrations


def rechoose_unstated(apps, schema_editor):
    """Choose again the leaderboard point of runs whose figures are of unstated token kind:
    they were ranked reading the figure as output tokens, and are now ranked by its lower
    reading through the scenario's shape (workers.figures.throughput), as the board prices
    them."""
    from apps.runs import summary

    Run = apps.get_model("runs", "Run")
    Point = apps.get_model("runs", "Point")
    runs = (
        Run.objects.filter(
            points__unlabelled_tok_s__isnull=False, points__output_tok_s__isnull=True
        )
        .select_related("scenario", "deployment")
        .distinct()
    )
    for run in runs.iterator():
        rows = list(Point.objects.filter(run=run).values("id", *summary.FIGURE_FIELDS))
        best = summary.best_point(
            summary.run_figures(rows, run.document),
            summary.scenario_slo(run.scenario),
            run.deployment.gpus,
            summary.scenario_shape(run.scenario),
        )
        Run.objects.filter(pk=run.pk).update(
            best_point_id=best.point_id if best else None,
            best_tput_per_gpu=best.tput_per_gpu if best else None,
            best_meets_slo=best.meets_slo if best else None,
        )


class Migration(migrations.Migration):
    dependencies = [("runs", "0014_point_client_bound")]

    operations = [migrations.RunPython(rechoose_unstated, migrations.RunPython.noop)]
