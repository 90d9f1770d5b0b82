from django.db import migrations, models
from django.db.models import Count


def refuse_shared_names(apps, schema_editor):
    """Stop with the names to settle rather than pick an owner: which organization keeps a
    pool name that two already use is the operator's decision (rename or delete one)."""
    Pool = apps.get_model("jobs", "Pool")
    shared = (
        Pool.objects.filter(org__isnull=False)
        .values("name")
        .annotate(owners=Count("org", distinct=True))
        .filter(owners__gt=1)
    )
    names = sorted(row["name"] for row in shared)
    if names:
        raise RuntimeError(
            "these pool names are claimed by more than one organization; a pool name now has "
            f"one owner, so rename or delete all but one of each first: {', '.join(names)}"
        )


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0005_token_created_by"),
        ("jobs", "0004_job_parts"),
    ]

    operations = [
        migrations.RunPython(refuse_shared_names, migrations.RunPython.noop),
        migrations.RemoveConstraint(model_name="pool", name="unique_pool_name_per_org"),
        migrations.AddConstraint(
            model_name="pool",
            constraint=models.UniqueConstraint(
                condition=models.Q(("org__isnull", False)),
                fields=("name",),
                name="unique_org_pool_name",
            ),
        ),
    ]
