"""`manage.py loadreference`: the shipped reference data, stored through each app that keeps a part
of it. It stands in the jobs app beside `demo` and `runscheduler`, the other commands that drive
several apps, because the catalog sits below the apps it would call."""

from django.core.management.base import BaseCommand

from apps.catalog.reference import INFERENCEX_DIR, INFERENCEX_SNAPSHOT, reference_data
from apps.claims.services import claims_evaluate, claims_load
from apps.imports.services import inferencex_store
from apps.imports.sources import read_folder
from apps.regressions.services import regressions_detect
from apps.runs.models import Run
from apps.runs.services import reference_load, runs_audit
from apps.trust.services import runs_rules_refresh


class Command(BaseCommand):
    help = (
        "Load the shipped reference data: accelerators, the published claims ledger, the published "
        "results (provenance 'published', with citations) and InferenceX's published results "
        "(provenance 'imported', apps/catalog/reference/inferencex/SOURCES.md). Safe to run "
        "again: nothing already stored is stored twice."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--no-inferencex",
            action="store_true",
            help="leave out the InferenceX dataset (about 1,500 runs; a minute on SQLite)",
        )

    def handle(self, *args, no_inferencex: bool, **options) -> None:
        counts = reference_load(data=reference_data())
        self.stdout.write(
            f"Reference data loaded: {counts['accelerators']} accelerators, "
            f"{counts['figures']} published figures, {counts['runs_created']} new published runs."
        )
        self._audit()
        claims = claims_load()
        self.stdout.write(f"Claims ledger: {claims} published claims.")
        if no_inferencex:
            return
        self.stdout.write("Loading InferenceX's published results (the shipped snapshot)...")
        outcome = inferencex_store(
            responses=read_folder(INFERENCEX_DIR, description=INFERENCEX_SNAPSHOT)
        )
        self.stdout.write(
            f"InferenceX: {outcome.rows_read} benchmark rows, {outcome.rows_new} new in "
            f"{outcome.runs_created} run(s); {outcome.accuracy_runs_created} new accuracy run(s)."
        )
        self._audit()
        # The history's change points, so the regressions page lists them at once.
        found = regressions_detect()
        self.stdout.write(
            f"Change points: {found.change_points} in {found.series} series ({found.new} new)."
        )
        # Each claim's standing on the runs just stored, so the scheduler's next look sees a flip.
        flips = claims_evaluate()
        self.stdout.write(f"Claims evaluated: {len(flips)} flipped since the last evaluation.")

    def _audit(self) -> None:
        """The row audit over the stored runs (manage.py audit_runs): new runs were audited
        as they landed; this catches runs stored before the audit, or before it changed."""
        changed = runs_audit()
        runs_rules_refresh(runs=Run.objects.filter(pk__in=changed))
        flagged = Run.objects.filter(audit_flagged=True).count()
        self.stdout.write(f"Row audit: {flagged} run(s) flagged ({len(changed)} changed now).")
