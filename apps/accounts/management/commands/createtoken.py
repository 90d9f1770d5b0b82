from django.core.management.base import BaseCommand, CommandError

from apps.accounts.services import organization_get_or_create, token_create


class Command(BaseCommand):
    help = (
        "Create an API token for an organization (created if needed). The token is printed "
        "once, as the last line of output; only its hash is stored."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("org", help="organization slug, e.g. 'acme'")
        parser.add_argument("--name", default="", help="label for the token, e.g. 'mi355x-worker'")

    def handle(self, *args, org: str, name: str, **options) -> None:
        try:
            organization = organization_get_or_create(slug=org)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        issued = token_create(org=organization, name=name)
        self.stdout.write(
            f"Token for organization '{organization.slug}' (prefix {issued.token.prefix}). "
            "Store it now: it cannot be shown again."
        )
        self.stdout.write(issued.plaintext)
