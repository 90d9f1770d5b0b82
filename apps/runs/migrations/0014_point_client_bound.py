"""`client_bound` becomes a Point column (issue 41): every reader of a point's validity asks
workers.figures.PointView, which reads columns, rather than each reading the run's document."""

from django.db import migrations, models


def fill_from_documents(apps, schema_editor):
    Run = apps.get_model("runs", "Run")
    Point = apps.get_model("runs", "Point")
    runs = Run.objects.exclude(document__points=[]).values_list("id", "document__points")
    for run_id, points in runs.iterator(chunk_size=500):
        bound = {
            ordinal: data["client_bound"]
            for ordinal, data in enumerate(points or [])
            if isinstance(data, dict) and data.get("client_bound") is not None
        }
        for value in (True, False):
            ordinals = [o for o, b in bound.items() if bool(b) is value]
            if ordinals:
                Point.objects.filter(run_id=run_id, ordinal__in=ordinals).update(client_bound=value)


class Migration(migrations.Migration):
    dependencies = [("runs", "0013_run_tally_ranked_by_rules")]

    operations = [
        migrations.AddField(
            model_name="point",
            name="client_bound",
            field=models.BooleanField(blank=True, null=True),
        ),
        migrations.RunPython(fill_from_documents, migrations.RunPython.noop),
    ]
