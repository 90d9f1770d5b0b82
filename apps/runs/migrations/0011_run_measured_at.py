import django.db.models.functions.comparison
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0005_token_created_by"),
        ("catalog", "0005_deployment_disaggregation"),
        ("runs", "0010_record_archive"),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="run",
            name="runs_run_scenari_285a2c_idx",
        ),
        migrations.AddIndex(
            model_name="run",
            index=models.Index(
                models.F("scenario"),
                models.F("deployment"),
                django.db.models.functions.comparison.Coalesce("started_at", "created_at").desc(),
                models.F("id").desc(),
                name="runs_run_latest_idx",
            ),
        ),
    ]
