from django.db import migrations, models


class Migration(migrations.Migration):
    # The lead re-points this dependency at the latest runs migration when merging.
    dependencies = [("runs", "0017_den_pool_denominators")]

    operations = [
        migrations.AddField(
            model_name="run",
            name="audit_reasons",
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.AddField(
            model_name="run",
            name="audit_flagged",
            field=models.BooleanField(db_index=True, default=False),
        ),
    ]
