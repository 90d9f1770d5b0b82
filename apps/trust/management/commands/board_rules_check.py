from django.core.management.base import BaseCommand

from apps.runs.models import Run
from apps.trust.services import runs_rules_refresh


class Command(BaseCommand):
    help = "Check the public board's rules again for every run (after an upgrade, say)."

    def handle(self, *args: object, **options: object) -> None:
        count = runs_rules_refresh(runs=Run.objects.all())
        passed = Run.objects.filter(rules_passed=True).count()
        self.stdout.write(f"checked {count} runs: {passed} pass the board's rules")
