from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from apps.runs.archive import ArchiveOutcome, archive_location, records_archive


class Command(BaseCommand):
    help = (
        "Move the request records of public runs older than the retention "
        "(INFERBOARD_RECORDS_RETAIN_DAYS, or --older-than-days) into one zstd Parquet file per "
        "run, in INFERBOARD_ARCHIVE_DIR or S3-compatible storage (INFERBOARD_ARCHIVE_S3_*). "
        "Rows are deleted only after the file reads back with the same digest and count; a "
        "rerun skips runs already archived. Private runs are never archived."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--older-than-days",
            type=int,
            default=None,
            help="archive runs created more than this many days ago (default: the setting)",
        )
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="list the runs and record counts that would move; write and delete nothing",
        )

    def handle(self, *args: object, **options: Any) -> None:
        days = options["older_than_days"] or settings.RECORDS_RETAIN_DAYS
        if not days or days < 1:
            raise CommandError(
                "retention is off: set INFERBOARD_RECORDS_RETAIN_DAYS or pass --older-than-days N"
            )
        dry_run = bool(options["dry_run"])
        verb = "would archive" if dry_run else "archived"

        def progress(done: int, total: int, outcome: ArchiveOutcome) -> None:
            where = outcome.location or archive_location(run_id=outcome.run_id)
            size = f", {outcome.size_bytes:,} bytes, sha256 {outcome.sha256[:12]}" * (not dry_run)
            self.stdout.write(
                f"[{done}/{total}] run {outcome.run_id}: {verb} {outcome.records:,} records"
                f" -> {where}{size}"
            )

        outcomes = records_archive(
            older_than=timezone.now() - timedelta(days=days), dry_run=dry_run, on_progress=progress
        )
        total = sum(o.records for o in outcomes)
        self.stdout.write(f"{verb} {total:,} records of {len(outcomes)} run(s) older than {days} d")
