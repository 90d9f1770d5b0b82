"""The scheduler: queue due scheduled jobs, fail jobs whose heartbeats stopped, sync InferenceX,
find change points after new runs and send regression alerts (apps.regressions), and re-check
the claims ledger after a new run or price set and tell its subscribers of a flip (apps.claims).

Run exactly one (compose service `scheduler`, or systemd). Schedules are rows in the database,
so editing one takes effect at the next tick without a restart.
"""

import time

from django.core.management.base import BaseCommand

from apps.claims.services import claims_tick
from apps.imports.services import inferencex_sync_due
from apps.jobs.schedules import schedules_tick
from apps.jobs.services import jobs_reap_stale
from apps.regressions.services import regressions_tick


class Command(BaseCommand):
    help = (
        "Queue due scheduled jobs, fail jobs without heartbeats, and sync InferenceX when due "
        "(INFERENCEX_API_URL), find change points after new runs and send regression alerts, "
        "re-check the claims ledger and send its alerts, every --every s."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--every", type=float, default=15.0, help="seconds between ticks")
        parser.add_argument("--once", action="store_true", help="one tick, then exit")

    def handle(self, *args, every: float, once: bool, **options) -> None:
        while True:
            queued = schedules_tick()
            reaped = jobs_reap_stale()
            if queued or reaped or once:
                self.stdout.write(f"queued {len(queued)} scheduled job(s), reaped {reaped}")
            synced = inferencex_sync_due()
            if synced is not None:
                self.stdout.write(
                    f"InferenceX sync {synced.status}: {synced.rows_new} new row(s) in "
                    f"{synced.runs_created} run(s), {synced.accuracy_runs_created} accuracy "
                    f"run(s){': ' + synced.error if synced.error else ''}"
                )
            detected, sent = regressions_tick()
            if detected is not None or sent:
                self.stdout.write(
                    (
                        f"regressions: {detected.change_points} change point(s) in "
                        f"{detected.series} series, {detected.new} new, "
                        f"{detected.alerts} alert(s) queued; "
                        if detected
                        else "regressions: "
                    )
                    + f"{sent} alert(s) sent"
                )
            flipped, told = claims_tick()
            if flipped or told:
                self.stdout.write(f"claims: {flipped} flip(s), {told} alert(s) sent")
            if once:
                return
            try:
                time.sleep(every)
            except KeyboardInterrupt:
                return
