"""The scheduler: queue due scheduled jobs and fail jobs whose heartbeats stopped.

Run exactly one (compose service `scheduler`, or systemd). Schedules are rows in the database,
so editing one takes effect at the next tick without a restart.
"""

import time

from django.core.management.base import BaseCommand

from apps.jobs.services import jobs_reap_stale, schedules_tick


class Command(BaseCommand):
    help = "Queue due scheduled jobs and mark jobs without heartbeats failed, every --every s."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--every", type=float, default=15.0, help="seconds between ticks")
        parser.add_argument("--once", action="store_true", help="one tick, then exit")

    def handle(self, *args, every: float, once: bool, **options) -> None:
        while True:
            queued = schedules_tick()
            reaped = jobs_reap_stale()
            if queued or reaped or once:
                self.stdout.write(f"queued {len(queued)} scheduled job(s), reaped {reaped}")
            if once:
                return
            try:
                time.sleep(every)
            except KeyboardInterrupt:
                return
