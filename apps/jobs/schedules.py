"""Schedules: their cron checked and saved, and each tick's due jobs queued."""

import itertools
import logging
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.accounts.services import audit_record
from apps.catalog.models import Scenario
from apps.jobs import cron
from apps.jobs.models import Endpoint, Job, Schedule
from apps.jobs.services import job_enqueue
from apps.jobs.specs import JobError, job_options_check, protocol_check

log = logging.getLogger(__name__)

# A year: further apart is not a schedule. Enough consecutive firings are checked to see a
# cron expression's shortest gap within an hour's minutes (`0,1 * * * *`).
SCHEDULE_MAX_INTERVAL_MINUTES = 366 * 24 * 60
CRON_GAPS_CHECKED = 61


def schedule_next_run(schedule: Schedule, after: datetime) -> datetime:
    if schedule.cron:
        return cron.parse(schedule.cron).next_after(after)
    return after + timedelta(minutes=schedule.interval_minutes or 0)


def schedule_validate(schedule: Schedule) -> None:
    """Raise JobError naming the field when the schedule could never queue a job."""
    if bool(schedule.cron) == bool(schedule.interval_minutes):
        raise JobError("cron", "give either a cron expression or an interval in minutes")
    shortest, longest = settings.SCHEDULE_MIN_INTERVAL_MINUTES, SCHEDULE_MAX_INTERVAL_MINUTES
    if schedule.interval_minutes is not None and not (
        shortest <= schedule.interval_minutes <= longest
    ):
        raise JobError("interval_minutes", f"from {shortest} to {longest} minutes")
    if schedule.cron:
        try:
            expression = cron.parse(schedule.cron)
            # The next few firings exist (`0 0 31 2 *` never fires) and are far enough apart.
            fires = [expression.next_after(timezone.now())]
            for _ in range(CRON_GAPS_CHECKED):
                fires.append(expression.next_after(fires[-1]))
        except cron.CronError as exc:
            raise JobError("cron", str(exc)) from None
        gap = min(b - a for a, b in itertools.pairwise(fires))
        if gap < timedelta(minutes=shortest):
            raise JobError("cron", f"fires more often than every {shortest} minutes")
    job_options_check(schedule.kind, schedule.options)
    if schedule.kind == Job.Kind.LOAD and schedule.scenario_id is None:
        raise JobError("scenario", "a load schedule needs a scenario")
    if schedule.kind == Job.Kind.ACCURACY:
        protocol_check(schedule.protocol)


def schedule_save(*, schedule: Schedule, now: datetime | None = None) -> Schedule:
    """Validate and store a new or edited schedule, and work out when it next fires."""
    schedule_validate(schedule)
    schedule.next_run_at = schedule_next_run(schedule, now or timezone.now())
    schedule.save()
    return schedule


def schedule_create(
    *, endpoint: Endpoint, scenario: Scenario | None, actor: str, **fields: Any
) -> Schedule:
    """A new schedule of the endpoint (fields: kind, protocol, options, cron,
    interval_minutes, enabled), checked, stored and audited. Raises JobError naming a field."""
    schedule = schedule_save(schedule=Schedule(endpoint=endpoint, scenario=scenario, **fields))
    audit_record(
        org=endpoint.org,
        actor=actor,
        action="schedule.created",
        target=f"schedule {schedule.pk} of {endpoint.name}",
    )
    return schedule


def schedule_edit(*, schedule: Schedule, changes: dict[str, Any]) -> Schedule:
    """Apply a partial edit: a cron expression replaces an interval and the other way round;
    a field given as None keeps its value."""
    if changes.get("cron"):
        schedule.interval_minutes = None
    if changes.get("interval_minutes"):
        schedule.cron = ""
    for name, value in changes.items():
        if value is not None or name == "scenario":
            setattr(schedule, name, value)
    return schedule_save(schedule=schedule)


def schedule_delete(*, schedule: Schedule, actor: str) -> None:
    org, target = schedule.endpoint.org, f"schedule {schedule.pk}"
    schedule.delete()
    audit_record(org=org, actor=actor, action="schedule.deleted", target=target)


def schedules_tick(*, now: datetime | None = None) -> list[Job]:
    """Queue a job for every enabled schedule that is due. A schedule fires once per tick
    however many runs it missed while the scheduler was down."""
    now = now or timezone.now()
    queued: list[Job] = []
    due = Schedule.objects.filter(enabled=True, next_run_at__lte=now).values_list("pk", flat=True)
    for schedule_id in due:
        with transaction.atomic():
            # Two schedulers by mistake still fire a schedule once: the row lock decides.
            schedule = (
                Schedule.objects.select_for_update(skip_locked=True, of=("self",))
                .filter(pk=schedule_id, enabled=True, next_run_at__lte=now)
                .select_related("endpoint", "scenario")
                .order_by()
                .first()
            )
            if schedule is None:
                continue
            schedule.last_run_at = now
            schedule.next_run_at = schedule_next_run(schedule, now)
            schedule.save(update_fields=["last_run_at", "next_run_at"])
        try:
            queued.append(
                job_enqueue(
                    endpoint=schedule.endpoint,
                    kind=schedule.kind,
                    scenario=schedule.scenario,
                    protocol=schedule.protocol,
                    options=schedule.options,
                    schedule=schedule,
                    requested_by=f"schedule {schedule.pk}",
                )
            )
        except Exception:
            log.exception("schedule %s could not queue its job", schedule.pk)
    return queued
