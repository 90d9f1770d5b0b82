"""`manage.py audit_runs`: the row audit (workers/audit.py) over every stored run, then the
board's rules of each run whose outcome changed (a flagged run does not rank). `loadreference`
runs the same after loading, so `scripts/run` audits the shipped data on every start."""

from django.core.management.base import BaseCommand

from apps.runs.models import Run
from apps.runs.services import runs_audit
from apps.trust.services import runs_rules_refresh


class Command(BaseCommand):
    help = "Audit every stored run against itself again; flag (or clear) runs that contradict."

    def handle(self, *args: object, **options: object) -> None:
        changed = runs_audit()
        runs_rules_refresh(runs=Run.objects.filter(pk__in=changed))
        flagged = Run.objects.filter(audit_flagged=True).count()
        self.stdout.write(f"audited the stored runs: {len(changed)} changed, {flagged} flagged")
