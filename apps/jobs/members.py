"""Writes for a load job fanned out over several workers of a pool (job option `members`).

Each member reports its own events (`member` in the body) and submits its share as a part
(JobPart). The job runs while any member runs; the first member to fail fails the job with
its error and discards every part; the last part in is merged with the others into one
result document (workers.loadgen.members.merge_parts, the workers' own aggregation) and
stored by the ingestion service in the same transaction that marks the job succeeded.
"""

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from pydantic import ValidationError

from apps.accounts.models import ApiToken
from apps.jobs.crypto import CredentialError
from apps.jobs.models import Job, JobPart
from apps.jobs.specs import JobConflict, JobError, job_credentials
from apps.runs.services import run_ingest
from workers.submit import EventAnswer


def job_members(job: Job) -> int:
    return int(job.options.get("members") or 1)


def _fresh(part: JobPart, now: datetime) -> bool:
    seen = part.heartbeat_at
    return seen is not None and now - seen <= timedelta(seconds=settings.JOB_HEARTBEAT_TIMEOUT_S)


def _end(job: Job, status: str, error: str, now: datetime) -> None:
    job.status, job.error, job.finished_at = status, error[:2000], now
    job.save(update_fields=["status", "error", "finished_at"])
    # Nothing half-stored: parts already in are discarded with the job.
    JobPart.objects.filter(job=job).delete()


def member_event(
    job: Job, member: int, event: str, attempt: int, worker: str, message: str, now: datetime
) -> EventAnswer:
    """One member's report, on the job services.job_event locked. `started` lets it run while
    the job is active and no other live worker holds its share (a redelivered message after a
    lost worker takes it over)."""
    members = job_members(job)
    if members == 1:
        raise JobError("member", "this job runs on one worker: report without a member")
    if not 0 <= member < members:
        raise JobError("member", f"this job has members 0 to {members - 1}")
    if attempt != job.attempt:
        return EventAnswer(job.status, cancel=True, detail=f"superseded by attempt {job.attempt}")
    part = JobPart.objects.filter(job=job, attempt=attempt, member=member).first()
    mine = part is not None and part.worker == worker
    if event == "started":
        return _started(job, part, member, worker, now)
    if event == "heartbeat":
        if job.status != Job.Status.RUNNING or not mine:
            return EventAnswer(job.status, cancel=True, detail=f"job is {job.status}")
        part.heartbeat_at = now
        part.save(update_fields=["heartbeat_at"])
        job.heartbeat_at = now
        job.progress = f"member {member}: {message}"[:500]
        job.save(update_fields=["heartbeat_at", "progress"])
        return EventAnswer(job.status, proceed=True)
    if event in ("failed", "cancelled"):
        if job.is_active and mine:
            failed = event == "failed"
            status = Job.Status.FAILED if failed else Job.Status.CANCELLED
            _end(job, status, f"member {member} of {members}: {message or event}", now)
        return EventAnswer(job.status)
    if event == "succeeded":
        # The last part's submission finishes the job; this report only confirms it.
        return EventAnswer(job.status)
    raise JobError("event", f"unknown event {event!r}")


def _started(
    job: Job, part: JobPart | None, member: int, worker: str, now: datetime
) -> EventAnswer:
    if not job.is_active:
        return EventAnswer(job.status, detail=f"job is {job.status}")
    if part is not None and part.part is not None:
        return EventAnswer(job.status, detail=f"member {member} already submitted its part")
    if part is not None and part.worker != worker and _fresh(part, now):
        return EventAnswer(job.status, detail=f"member {member} already running on {part.worker}")
    try:
        api_key = job_credentials(job)
    except CredentialError as exc:
        _end(job, Job.Status.FAILED, str(exc), now)
        return EventAnswer(job.status, detail=str(exc))
    if part is None:
        part = JobPart(job=job, attempt=job.attempt, member=member)
    part.worker, part.heartbeat_at = worker[:300], now
    part.save()
    if job.status == Job.Status.QUEUED:
        job.status, job.started_at = Job.Status.RUNNING, now
    job.worker = f"{job_members(job)} members"
    job.heartbeat_at = now
    job.progress = f"member {member} started"
    job.save(update_fields=["status", "worker", "started_at", "heartbeat_at", "progress"])
    return EventAnswer(job.status, proceed=True, api_key=api_key)


def job_part_submit(
    *,
    job: Job,
    member: int,
    attempt: int,
    worker: str,
    part: dict,
    token: ApiToken,
    job_secret: str | None,
) -> Job:
    """Keep one member's part; with the last one in, merge all of them into one run, stored
    in this transaction. A redelivered part of a finished job answers the job as it is.
    Raises JobConflict (a superseded attempt, a job no longer running, a member this worker
    does not hold), JobError (a part that does not parse or match), and the ingestion
    service's errors (nothing is stored then)."""
    from workers.loadgen.members import MemberPart, PartsMismatch, merge_parts

    now = timezone.now()
    with transaction.atomic():
        job = Job.objects.select_for_update().select_related("endpoint__org").get(pk=job.pk)
        if attempt != job.attempt:
            raise JobConflict("attempt", f"superseded by attempt {job.attempt}")
        if job.status == Job.Status.SUCCEEDED:
            return job
        if job.status != Job.Status.RUNNING:
            raise JobConflict("status", f"job is {job.status}: the part is discarded")
        row = JobPart.objects.filter(job=job, attempt=attempt, member=member).first()
        if row is None or row.worker != worker:
            raise JobConflict("member", f"member {member} is not running on this worker")
        members = job_members(job)
        try:
            parsed = MemberPart.model_validate(part)
        except ValidationError as exc:
            first = exc.errors(include_url=False, include_input=False)[0]
            where = ".".join(str(p) for p in first["loc"])
            raise JobError("part", f"{where}: {first['msg']}") from None
        if (parsed.member, parsed.members) != (member, members):
            raise JobError("part", f"a part of member {member} of {members}")
        row.part, row.received_at = part, now
        row.save(update_fields=["part", "received_at"])
        rows = list(JobPart.objects.filter(job=job, attempt=attempt, part__isnull=False))
        if len(rows) < members:
            job.progress = f"{len(rows)} of {members} members submitted"
            job.save(update_fields=["progress"])
            return job
        try:
            document = merge_parts([MemberPart.model_validate(r.part) for r in rows])
        except PartsMismatch as exc:
            raise JobError("part", str(exc)) from None
        outcome = run_ingest(
            document=document,
            org=job.endpoint.org,
            is_public=job.endpoint.is_public,
            submitted_by=token,
            job_secret=job_secret,
        )
        JobPart.objects.filter(job=job).delete()
        job.status, job.run, job.error = Job.Status.SUCCEEDED, outcome.run, ""
        job.finished_at, job.progress = now, f"run {outcome.run.pk}"
        job.save(update_fields=["status", "run", "error", "finished_at", "progress"])
    return job
