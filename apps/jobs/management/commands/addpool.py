from django.core.management.base import BaseCommand

from apps.jobs.services import pools_first_party_ensure


class Command(BaseCommand):
    help = (
        "Register first-party pools: queues the service's own Celery workers serve "
        "(celery -A workers.celery worker -Q pool.<name>). Endpoints may use these or their "
        "organization's own pools, nothing else. Idempotent."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("names", nargs="+", help="e.g. pool.mi355x pool.b200 (or mi355x)")

    def handle(self, *args, names: list[str], **options) -> None:
        for pool in pools_first_party_ensure(names):
            self.stdout.write(f"first-party pool {pool.name}")
