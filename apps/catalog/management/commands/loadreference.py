from django.core.management.base import BaseCommand

from apps.catalog.reference import reference_data
from apps.runs.services import reference_load


class Command(BaseCommand):
    help = (
        "Load the shipped reference data: accelerators, their price tiers and the published "
        "results (provenance 'published', with citations). Safe to run again."
    )

    def handle(self, *args, **options) -> None:
        counts = reference_load(data=reference_data())
        self.stdout.write(
            f"Reference data loaded: {counts['accelerators']} accelerators, "
            f"{counts['figures']} published figures, {counts['runs_created']} new published runs."
        )
