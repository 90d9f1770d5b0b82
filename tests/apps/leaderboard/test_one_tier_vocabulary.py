"""A price tier is spelled one way on every page (apps.costs.reference.TIER_LABELS), in the
tier pickers and in the sentences that say which tier priced a figure."""

import pytest
from django.core.management import call_command
from django.utils.html import strip_tags

from apps.costs.reference import TIER_LABELS
from apps.runs.models import Run

pytestmark = pytest.mark.django_db

# How the slugs were once written out on one page or another.
OTHER_SPELLINGS = ("owning_hyperscaler", "owning hyperscaler", "rental_3yr", "rental 3yr")


def test_every_page_spells_each_tier_as_the_cost_pages_do(client):
    call_command("loadreference", no_inferencex=True, verbosity=0)
    # The seed's published runs: the cookbook's (8k/1k, total tok/s only) price no output.
    seed = Run.objects.filter(provenance="published", scenario__slug="seed-20k-1k-60")
    run = seed.first()
    other = seed.exclude(pk=run.pk).first()
    pages = [
        "/?scenario=seed-20k-1k-60&unchecked=1",
        f"/runs/{run.pk}/",
        f"/compare/?d={run.deployment_id}&d={other.deployment_id}&scenario=seed-20k-1k-60",
        "/story/glm-5-2/",
        "/costs/",
        "/costs/claim/",
    ]
    for path in pages:
        text = strip_tags(client.get(path).content.decode())
        assert TIER_LABELS["owning_hyperscaler"] in text, path
        for spelling in OTHER_SPELLINGS:
            assert spelling not in text, (path, spelling)
