"""Sync InferenceX's published results now, from its API or a folder of saved responses."""

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from apps.imports.services import inferencex_sync


class Command(BaseCommand):
    help = (
        "Import what is new in InferenceX's published results: its API (a URL such as "
        "https://inferencex.com/api/v1) or a folder holding benchmarks.json, "
        "benchmarks-history.json and evaluations.json. Rows already stored are skipped; a "
        "source that cannot be read stores nothing. Default source: INFERENCEX_API_URL."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--source", default="", help="URL or folder (default: the setting)")

    def handle(self, *args, source: str, **options) -> None:
        location = source or settings.INFERENCEX_API_URL
        if not location:
            raise CommandError("no source: give --source URL|FOLDER or set INFERENCEX_API_URL")
        sync = inferencex_sync(location=location, trigger="command")
        if sync.status != sync.Status.SUCCEEDED:
            raise CommandError(f"InferenceX sync failed: {sync.error}")
        self.stdout.write(
            f"InferenceX sync of {location}: {sync.rows_read} rows read, {sync.rows_new} new "
            f"in {sync.runs_created} run(s), {sync.accuracy_runs_created} accuracy run(s)."
        )
