from django.core.management.base import BaseCommand, CommandError

from apps.jobs.services import pools_first_party_ensure
from apps.jobs.specs import JobError


class Command(BaseCommand):
    help = (
        "Register first-party pools: queues the service's own Celery workers serve "
        "(celery -A workers.celery worker -Q pool.<name>). Endpoints may use these or their "
        "organization's own pools, nothing else. Idempotent; a name an organization holds is "
        "refused."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("names", nargs="+", help="e.g. pool.mi355x pool.b200 (or mi355x)")

    def handle(self, *args, names: list[str], **options) -> None:
        try:
            pools = pools_first_party_ensure(names)
        except JobError as exc:
            raise CommandError(f"{exc.field}: {exc.message}; no pool was added") from None
        for pool in pools:
            self.stdout.write(f"first-party pool {pool.name}")
