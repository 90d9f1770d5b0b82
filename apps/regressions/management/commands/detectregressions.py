from django.core.management.base import BaseCommand

from apps.regressions.services import alerts_deliver, regressions_detect


class Command(BaseCommand):
    help = (
        "Find change points in every series (configuration × scenario × load level × metric) "
        "over valid runs, queue alerts for subscribers, and deliver those due. The scheduler "
        "(runscheduler) does this by itself after new runs; this is for a pass by hand."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--no-deliver", action="store_true", help="queue alerts only")

    def handle(self, *args, no_deliver: bool, **options) -> None:
        outcome = regressions_detect()
        self.stdout.write(
            f"{outcome.change_points} change point(s) in {outcome.series} series "
            f"({outcome.new} new); {outcome.alerts} alert(s) queued."
        )
        if not no_deliver:
            self.stdout.write(f"{alerts_deliver()} alert(s) sent.")
