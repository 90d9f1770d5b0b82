"""Reference prices come from the dated price sets shipped in apps/costs/reference_prices/, no
longer from rows `loadreference` stored: those rows (and the all-in kW it copied onto each
accelerator) held the August 2025 set and would have stood in front of every newer one.

Only what `loadreference` wrote is removed, known by the source text it gave them; a
reference row an operator stored, and every organization's own tier, stay."""

from django.db import migrations

LOADED_SOURCE = (
    "SemiAnalysisAI/InferenceX-app packages/app/src/lib/constants.ts GPU_SPECS (commit 77ca49a"
)


def forwards(apps, schema_editor):
    PriceTier = apps.get_model("catalog", "PriceTier")
    Accelerator = apps.get_model("catalog", "Accelerator")
    PriceTier.objects.filter(org__isnull=True, source__startswith=LOADED_SOURCE).delete()
    Accelerator.objects.filter(source__startswith=LOADED_SOURCE).update(all_in_kw=None)


class Migration(migrations.Migration):
    dependencies = [
        ("costs", "0001_initial"),
        ("catalog", "0005_deployment_disaggregation"),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
