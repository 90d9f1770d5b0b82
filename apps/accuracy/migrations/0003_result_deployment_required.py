"""Every accuracy result has its run's deployment (filled by 0002)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("accuracy", "0002_result_deployment")]

    operations = [
        migrations.AlterField(
            model_name="accuracyresult",
            name="deployment",
            field=models.ForeignKey(
                editable=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="catalog.deployment",
            ),
        ),
    ]
