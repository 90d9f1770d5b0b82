"""Which job a result document that came with a job secret belongs to, and which kind of host
ran it: the jobs app's answer to apps.runs.signals.job_claimed.

A document is the job's only when its secret is the one the attempt running now was handed
(apps.jobs.crypto.job_binding_secret covers the attempt), so figures from a lost, superseded,
failed or cancelled attempt are never stored as `scheduled`."""

from __future__ import annotations

from apps.accounts.models import Organization
from apps.jobs.crypto import job_binding_matches
from apps.jobs.models import Job, Pool
from apps.jobs.specs import JobConflict
from apps.runs.models import Run

SECRET_FIELD = "X-Inferboard-Job-Secret"


def _attempt_over(job: Job, job_secret: str) -> JobConflict | None:
    """A refusal naming the secret when it is this job's but not the running attempt's: an
    earlier attempt's (superseded by a retry), or the current one's after it finished. None
    when the secret is no attempt's at all (a forgery: the caller's plain refusal)."""
    current = job_binding_matches(job.idempotency_key, job.attempt, job_secret)
    if current and job.status == Job.Status.RUNNING:
        return None
    if current and job.started_at is not None:
        return JobConflict(
            SECRET_FIELD,
            f"attempt {job.attempt} of this job is {job.status}: a finished attempt's "
            "figures are not stored as scheduled",
        )
    key = job.idempotency_key
    earlier = next(
        (n for n in range(1, job.attempt) if job_binding_matches(key, n, job_secret)), None
    )
    if earlier is not None:
        return JobConflict(
            SECRET_FIELD,
            f"this is attempt {earlier}'s secret, and attempt {job.attempt} superseded it: "
            "only the running attempt's figures are stored as scheduled",
        )
    return None


def job_document_host(
    sender: object, *, idempotency_key: str, org: Organization | None, job_secret: str, **_: object
) -> str | None:
    """apps.runs.signals.job_claimed: the kind of host that ran the job a document claims to
    be (first party or the organization's own), or None when the document is not that
    job's: another key, another organization, a secret no attempt had, or a job that never
    reported starting. Raises JobConflict (409, naming the secret header) when the secret is
    the job's but its attempt is not the one running: nothing is stored either way."""
    job = Job.objects.filter(idempotency_key=idempotency_key).select_related("endpoint").first()
    if job is None or org is None or job.endpoint.org_id != org.pk:
        return None
    if (refusal := _attempt_over(job, job_secret)) is not None:
        raise refusal
    if job.status != Job.Status.RUNNING or not job_binding_matches(
        job.idempotency_key, job.attempt, job_secret
    ):
        # Not this job's secret, or a job that never reported starting: it ran nowhere, so
        # its "result" is made up.
        return None
    # The organization's own pool of that name wins, as pool_check routes it: a first-party
    # pool of the same name (one made before names had one owner) must not lend its label to
    # an org host's job.
    org_pool = Pool.objects.filter(name=job.pool, org_id=job.endpoint.org_id).exists()
    first_party = not org_pool and Pool.objects.filter(name=job.pool, org__isnull=True).exists()
    return Run.OriginHost.FIRST_PARTY if first_party else Run.OriginHost.ORG_HOST
