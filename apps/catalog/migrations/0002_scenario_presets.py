from django.db import migrations


def create_presets(apps, schema_editor):
    from apps.catalog.presets import PRESETS, preset_row

    Scenario = apps.get_model("catalog", "Scenario")
    for preset in PRESETS:
        Scenario.objects.update_or_create(slug=preset["slug"], defaults=preset_row(preset))


class Migration(migrations.Migration):
    dependencies = [("catalog", "0001_initial")]
    operations = [migrations.RunPython(create_presets, migrations.RunPython.noop)]
