"""Accuracy results keep their run's deployment (apps/accuracy/models.py says why): the
column is added empty and filled from each result's run; 0003 makes it required (apart: on
PostgreSQL the fill leaves deferred foreign-key checks pending, and a table with pending
checks cannot be altered in the same transaction)."""

import django.db.models.deletion
from django.db import migrations, models

FILL = """
UPDATE accuracy_accuracyresult SET deployment_id = (
    SELECT runs_run.deployment_id FROM runs_run WHERE runs_run.id = accuracy_accuracyresult.run_id
)
"""


class Migration(migrations.Migration):
    # Only what the fill reads (runs_run.deployment_id and the deployment table exist from
    # their apps' first migrations): tests that move the runs app's schema back and forth
    # (tests/apps/runs/migrating.py) then leave this one applied.
    dependencies = [
        ("accuracy", "0001_initial"),
        ("catalog", "0001_initial"),
        ("runs", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="accuracyresult",
            name="deployment",
            field=models.ForeignKey(
                editable=False,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="catalog.deployment",
            ),
        ),
        migrations.RunSQL(FILL, migrations.RunSQL.noop),
    ]
