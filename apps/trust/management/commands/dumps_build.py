from django.core.management.base import BaseCommand

from apps.trust.dumps import dumps_build


class Command(BaseCommand):
    help = "Build the public dumps now (run from cron or beat; requests rebuild them too)."

    def handle(self, *args: object, **options: object) -> None:
        for path in dumps_build():
            self.stdout.write(f"{path} ({path.stat().st_size} bytes)")
