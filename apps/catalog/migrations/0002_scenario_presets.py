from django.db import migrations


def create_presets(apps, schema_editor):
    from apps.catalog.presets import PRESETS, shape_key

    Scenario = apps.get_model("catalog", "Scenario")
    for preset in PRESETS:
        fields = {k: v for k, v in preset.items() if k not in {"slug", "shape_suffix"}}
        key = shape_key(
            input_tokens=preset["input_tokens"],
            output_tokens=preset["output_tokens"],
            prefix_cache_hit_rate=preset.get("prefix_cache_hit_rate", 0),
            dataset=preset.get("dataset", "random"),
            suffix=preset.get("shape_suffix", ""),
        )
        Scenario.objects.update_or_create(
            slug=preset["slug"], defaults={**fields, "shape_key": key, "is_preset": True}
        )


class Migration(migrations.Migration):
    dependencies = [("catalog", "0001_initial")]
    operations = [migrations.RunPython(create_presets, migrations.RunPython.noop)]
