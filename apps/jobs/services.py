"""Writes for endpoints, pools and jobs: queueing, agents' claims and long polls, events and
the reaper. Job specs are apps/jobs/specs.py, the broker apps/jobs/broker.py, schedules
apps/jobs/schedules.py.
"""

import logging
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypedDict, Unpack

from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, models, transaction
from django.utils import timezone
from pydantic import ValidationError

from apps.accounts.models import ApiToken, Organization
from apps.accounts.services import audit_record
from apps.catalog.models import Deployment, Scenario
from apps.catalog.services import deployment_upsert
from apps.jobs.allowlist import endpoint_check
from apps.jobs.broker import BrokerUnavailable, publish, publish_members
from apps.jobs.crypto import CredentialError, encrypt
from apps.jobs.members import member_event
from apps.jobs.models import Endpoint, Job, JobPart, Pool, Schedule
from apps.jobs.selectors import pool_default
from apps.jobs.specs import (
    JobConflict,
    JobError,
    job_credentials,
    job_options_check,
    job_spec,
    protocol_check,
)
from apps.runs.models import Run
from workers import result_facts
from workers import results as doc
from workers.celery import TASK_ACCURACY, TASK_LOAD, pool_name_refusal, pool_queue
from workers.submit import EventAnswer

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Facts:
    # Duck-types the parts of a ResultDocument that deployment_upsert reads.
    model: result_facts.ModelInfo
    deployment: result_facts.Deployment

    def deployment_fingerprint(self) -> str:
        return doc.deployment_fingerprint(self.model.name, self.deployment)


# Endpoints ---------------------------------------------------------------------------------


def facts_of(deployment: Deployment) -> dict[str, Any]:
    """A stored deployment as the model and deployment sections of a result document."""
    d = deployment
    facts = {
        "model": {"name": d.model.name, "family": d.model.family or None},
        "deployment": {
            "accelerator": d.accelerator.sku,
            "gpus": d.gpus,
            "nodes": d.nodes,
            "engine": {
                "name": d.engine.name,
                "version": d.engine_version or None,
                "image_digest": d.image_digest or None,
            },
            "quantization": {
                "weights": d.quant_weights,
                "activations": d.quant_activations or None,
                "kv_cache": d.quant_kv_cache or None,
                "note": d.quant_note or None,
            },
            "parallelism": {"tp": d.tp, "dp": d.dp, "ep": d.ep, "pp": d.pp},
            "engine_flags": list(d.engine_flags or []),
            "notes": d.notes or None,
        },
    }
    if d.dp_attention is not None:
        facts["deployment"]["parallelism"]["dp_attention"] = d.dp_attention
    if d.spec_method:
        facts["deployment"]["speculative"] = {
            "method": d.spec_method,
            "draft_tokens": d.spec_draft_tokens,
        }
    return _validated_facts(facts)


def _validated_facts(facts: dict[str, Any]) -> dict[str, Any]:
    model = result_facts.ModelInfo.model_validate(facts["model"])
    deployment = result_facts.Deployment.model_validate(facts["deployment"])
    return {
        "model": model.model_dump(mode="json", exclude_none=True),
        "deployment": deployment.model_dump(mode="json", exclude_none=True),
    }


def deployment_from_facts(*, model: dict[str, Any], deployment: dict[str, Any]) -> Deployment:
    """The catalog deployment for these facts (created when new). Raises pydantic errors."""
    facts = _Facts(
        result_facts.ModelInfo.model_validate(model),
        result_facts.Deployment.model_validate(deployment),
    )
    # _Facts has the two parts of a document deployment_upsert reads (duck-typed), not a
    # whole ResultDocument.
    return deployment_upsert(document=facts)  # type: ignore[arg-type]


class EndpointOptions(TypedDict, total=False):
    """How an endpoint is called, beyond its name and URL; every key has a default."""

    served_model: str  # default: the model's name in the facts
    api: str  # Endpoint.Api: completions (default) or chat
    pool: str  # default: pool.<accelerator sku>
    api_key: str  # write-only: stored encrypted
    simulated: bool  # a test server: its runs are labelled simulated
    is_public: bool  # default True


def endpoint_create(
    *,
    org: Organization,
    name: str,
    url: str,
    deployment: Deployment,
    facts: dict[str, Any] | None = None,
    **options: Unpack[EndpointOptions],
) -> Endpoint:
    """Register an endpoint. Raises EndpointRefused when the URL is outside the allowlist,
    JobError when the pool is neither the organization's own nor a first-party pool."""
    clean_url = endpoint_check(url)
    named = options.get("pool")
    pool = pool_queue(named) if named else pool_default(org=org, sku=deployment.accelerator.sku)
    pool_check(org=org, pool=pool)
    facts = _validated_facts(facts) if facts else facts_of(deployment)
    return Endpoint.objects.create(
        org=org,
        deployment=deployment,
        facts=facts,
        name=name,
        url=clean_url,
        served_model=options.get("served_model") or facts["model"]["name"],
        api=options.get("api", Endpoint.Api.COMPLETIONS),
        pool=pool,
        api_key_encrypted=encrypt(options.get("api_key", "")),
        simulated=options.get("simulated", False),
        is_public=options.get("is_public", True),
    )


class EndpointNameTaken(JobConflict):
    """The organization already has an endpoint of this name."""


def endpoint_register(
    *,
    org: Organization,
    actor: str,
    name: str,
    url: str,
    deployment: Deployment | None = None,
    facts: dict[str, Any] | None = None,
    **options: Unpack[EndpointOptions],
) -> Endpoint:
    """Register an endpoint as the API and the endpoints page both do: for an existing
    deployment, or for the deployment its facts describe; audited, in one transaction, so a
    refusal stores nothing (not even the catalog rows of new facts). Raises EndpointNameTaken,
    JobError (field named), EndpointRefused (the allowlist)."""
    with transaction.atomic():
        if Endpoint.objects.filter(org=org, name=name).exists():
            raise EndpointNameTaken("name", "your organization already has this endpoint name")
        if deployment is None:
            if facts is None:
                raise JobError("deployment", "give deployment_id, or model and deployment")
            try:
                deployment = deployment_from_facts(**facts)
            except ValidationError as exc:
                raise JobError("deployment", exc.errors(include_url=False)[0]["msg"]) from exc
        endpoint = endpoint_create(
            org=org, name=name, url=url, deployment=deployment, facts=facts, **options
        )
        audit_record(org=org, actor=actor, action="endpoint.created", target=endpoint.name)
    return endpoint


# Pools and jobs ---------------------------------------------------------------------------


def pool_check(*, org: Organization, pool: str) -> Pool:
    """The pool an endpoint of `org` may use: the organization's own (its agents take the
    jobs), else a first-party pool (a Pool row without an organization: the service's Celery
    workers). Raises JobError for any other name: a made-up name would create a broker queue
    nobody serves, and another organization's pool is none of this one's business (its
    names are scoped to it, so they neither clash with nor reveal anyone else's)."""
    own = Pool.objects.filter(name=pool, org=org).first()
    if own is not None:
        return own
    first_party = Pool.objects.filter(name=pool, org__isnull=True).first()
    if first_party is not None:
        return first_party
    raise JobError(
        "pool",
        f"no pool {pool!r}: use one of your organization's pools (POST /api/v1/pools) or one "
        "the service runs workers for",
    )


def pools_first_party_ensure(names: list[str]) -> list[Pool]:
    """Register first-party pools (the service's own Celery workers), idempotently, all or
    none. JobConflict (naming `name` and the organization) for a name an organization holds:
    its agents take that queue's jobs, and a fleet pool beside it would make an operator, a
    log or a document's label confuse the two (one owner per name, as pool_create keeps it).
    The operator is staff, so the organization is named."""
    queues = [_pool_name(n) for n in names]
    with transaction.atomic():
        held = Pool.objects.filter(name__in=queues, org__isnull=False).select_related("org")
        if (pool := held.order_by("name").first()) is not None:
            raise JobConflict(
                "name",
                f"{pool.name} is organization {pool.org.slug!r}'s own pool (its agents take "
                "its jobs); choose another name for a first-party pool",
            )
        return [Pool.objects.get_or_create(name=queue, org=None)[0] for queue in queues]


def pool_reserved(queue: str) -> bool:
    """Whether a pool name is the service's own: a first-party pool, a name in the operator's
    registry (FIRST_PARTY_POOLS), or one under the operator's prefix (FIRST_PARTY_POOL_PREFIX),
    which reserves names `addpool` has not registered yet, by pattern."""
    prefix = settings.FIRST_PARTY_POOL_PREFIX and pool_queue(settings.FIRST_PARTY_POOL_PREFIX)
    return (
        queue in {pool_queue(n) for n in settings.FIRST_PARTY_POOLS}
        or (bool(prefix) and queue.startswith(prefix))
        or Pool.objects.filter(name=queue, org__isnull=True).exists()
    )


def _pool_name(name: str) -> str:
    """The pool's name in its one form (pool_queue), or JobError naming `name` for one that
    holds an invisible character or a look-alike (pool_name_refusal): checked before the
    name is compared with any other, so 'pool.b300' with a zero-width space, in fullwidth
    letters or with a trailing dot never stands beside 'pool.b300'."""
    if refused := pool_name_refusal(name.strip()):
        raise JobError("name", f"the pool name {refused}")
    return pool_queue(name)


def pool_create(*, org: Organization, name: str) -> Pool:
    """Claim a pool name for the organization's own hosts (their agents take its jobs). A name
    has one owner: JobConflict (409, naming `name`) when another organization holds it or it
    is the service's own (pool_reserved), so no two tenants' agents share a name that an
    operator, a log or a later `addpool` could confuse (the unique_org_pool_name constraint
    holds it against races)."""
    queue = _pool_name(name)
    existing = Pool.objects.filter(name=queue, org=org).first()
    if existing is not None:
        return existing
    if pool_reserved(queue):
        raise JobConflict("name", f"pool {queue!r} is one of the service's own pools")
    taken = JobConflict("name", f"pool {queue!r} is already another organization's")
    if Pool.objects.filter(name=queue, org__isnull=False).exists():
        raise taken
    try:
        with transaction.atomic():
            return Pool.objects.create(name=queue, org=org)
    except IntegrityError:  # claimed by another organization at the same moment
        raise taken from None


# Agents' long polls (apps.jobs.api.agent_claim) ---------------------------------------------


def _wake_key(pool: Pool) -> str:
    return f"agent:pool:{pool.pk}:queued"


def agent_pool_version(pool: Pool) -> int | None:
    """A counter that moves whenever a job is queued on the pool: a waiting poll reads it
    (a cache read) instead of asking the database every half second."""
    return cache.get(_wake_key(pool))


def agent_pool_wake(pool: Pool) -> None:
    key = _wake_key(pool)
    cache.add(key, 0, timeout=None)
    try:
        cache.incr(key)
    except ValueError:  # evicted, or the cache is down: polls find the job at their recheck
        cache.set(key, 1, timeout=None)


def _polls_key(token: ApiToken) -> str:
    # A counter (apps.cache.COUNTER_PREFIXES): still counted while the cache is down.
    return f"ratelimit:agent-polls:token:{token.pk}"


def agent_poll_open(token: ApiToken) -> bool:
    """Counts one more open long poll for the token; False (and not counted) past
    AGENT_MAX_POLLS_PER_TOKEN. Each poll lasts at most 30 s: the count expires after a
    minute, so a process killed mid-poll cannot leave it stuck."""
    key = _polls_key(token)
    cache.add(key, 0, timeout=60)
    cache.touch(key, timeout=60)
    try:
        open_now = cache.incr(key)
    except ValueError:
        cache.set(key, 1, timeout=60)
        open_now = 1
    if open_now > settings.AGENT_MAX_POLLS_PER_TOKEN:
        agent_poll_close(token)
        return False
    return True


def agent_poll_close(token: ApiToken) -> None:
    try:
        if cache.decr(_polls_key(token)) < 0:
            cache.set(_polls_key(token), 0, timeout=60)
    except ValueError:
        pass


def job_claim(*, pool: Pool, worker: str, now: datetime | None = None) -> Job | None:
    """The oldest queued job of this organization's pool, marked as offered to `worker`.

    An offer is not a start: the agent still reports `started` (job_event), which stays
    the one place that decides who runs a job. An offer that was never started is made
    again after the heartbeat timeout (the agent died between claim and start)."""
    now = now or timezone.now()
    stale = now - timedelta(seconds=settings.JOB_HEARTBEAT_TIMEOUT_S)
    with transaction.atomic():
        job = (
            Job.objects.select_for_update(skip_locked=True, of=("self",))
            .filter(pool=pool.name, status=Job.Status.QUEUED, endpoint__org_id=pool.org_id)
            .filter(models.Q(worker="") | models.Q(heartbeat_at__lt=stale))
            .order_by("created_at", "id")
            .first()
        )
        if job is None:
            return None
        job.worker, job.heartbeat_at, job.progress = worker[:300], now, "offered to an agent"
        job.save(update_fields=["worker", "heartbeat_at", "progress"])
    return job


def _send(job: Job) -> None:
    pool = pool_check(org=job.endpoint.org, pool=job.pool)
    if pool.is_agent:
        # An organization's own pool: its agent takes the job over HTTP (apps.jobs.agent);
        # nothing goes to the broker, which such hosts never reach. Waiting polls wake up.
        transaction.on_commit(lambda: agent_pool_wake(pool))
        return
    spec = job_spec(job)
    name = TASK_LOAD if job.kind == Job.Kind.LOAD else TASK_ACCURACY
    label = f"(job {job.pk}, attempt {job.attempt})"
    members = int(job.options.get("members") or 1)
    try:
        if members > 1:
            # Chosen once, here: every member's first level starts at this instant.
            start_at = timezone.now() + timedelta(seconds=settings.JOB_MEMBERS_START_LEAD_S)
            publish_members(
                name,
                spec,
                members=members,
                start_at=start_at,
                queue=job.pool,
                task_id=job.task_id,
                label=label,
            )
        else:
            publish(name, spec, queue=job.pool, task_id=job.task_id, label=label)
    except Exception as exc:
        log.error("job %s: the broker did not take it: %r", job.pk, exc)
        Job.objects.filter(pk=job.pk).update(
            status=Job.Status.FAILED,
            error=f"the broker did not take the job ({type(exc).__name__}); retry later",
            finished_at=timezone.now(),
        )
        raise BrokerUnavailable(str(job.pk)) from exc


def job_enqueue(
    *,
    endpoint: Endpoint,
    kind: str = Job.Kind.LOAD,
    scenario: Scenario | None = None,
    protocol: str = "",
    options: dict[str, Any] | None = None,
    schedule: Schedule | None = None,
    requested_by: str = "",
) -> Job:
    """Queue a job on the endpoint's pool. Raises EndpointRefused (allowlist), JobError (bad
    request, nothing stored) or BrokerUnavailable (the job is stored as failed)."""
    endpoint_check(endpoint.url)
    pool = pool_check(org=endpoint.org, pool=endpoint.pool)
    if (options or {}).get("members", 1) != 1 and pool.is_agent:
        raise JobError("members", "only the service's own pools run a job on several workers")
    if kind == Job.Kind.LOAD and scenario is None:
        raise JobError("scenario", "a load job needs a scenario")
    if kind == Job.Kind.ACCURACY:
        protocol_check(protocol)
    job_options_check(kind, options or {})
    job = Job(
        endpoint=endpoint,
        kind=kind,
        scenario=scenario if kind == Job.Kind.LOAD else None,
        protocol=protocol if kind == Job.Kind.ACCURACY else "",
        # A fresh prompt seed per job, kept with it: a repeated seed repeats the prompts,
        # which the endpoint's prefix cache may still hold from the previous run.
        options={"seed": secrets.randbelow(2**31), **(options or {})},
        schedule=schedule,
        idempotency_key=Job.new_key(),
        pool=endpoint.pool,
        requested_by=requested_by[:200],
    )
    job_spec(job)  # validates the options before anything is stored
    job_credentials(job)  # a key that cannot be decrypted is refused now, not at start
    job.save()
    audit_record(
        org=endpoint.org,
        actor=requested_by,
        action="job.queued",
        target=f"job {job.pk}",
        endpoint=endpoint.name,
    )
    _send(job)
    return job


def job_cancel(*, job: Job, actor: str = "") -> Job:
    """Queued jobs never start; running ones stop at their next heartbeat."""
    with transaction.atomic():
        job = Job.objects.select_for_update().select_related("endpoint__org").get(pk=job.pk)
        if job.is_active:
            job.status = Job.Status.CANCELLED
            job.finished_at = timezone.now()
            job.error = "cancelled"
            job.save(update_fields=["status", "finished_at", "error"])
            JobPart.objects.filter(job=job).delete()  # a fanned-out job's parts never merge
            if actor:
                audit_record(
                    org=job.endpoint.org,
                    actor=actor,
                    action="job.cancelled",
                    target=f"job {job.pk}",
                )
    return job


def job_retry(*, job: Job) -> Job:
    """Queue a failed or cancelled job again, as a new attempt with the same idempotency key:
    if the lost attempt did store its run, the retry finds it instead of storing another."""
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job.pk)
        if job.is_active or job.status == Job.Status.SUCCEEDED:
            raise JobConflict(
                "status", f"only failed or cancelled jobs can be retried ({job.status})"
            )
        # Refused before anything changes: a retry that cannot be sent must not leave the
        # job queued forever (the reaper only looks at running jobs).
        endpoint_check(job.endpoint.url)
        job.attempt += 1
        job.status = Job.Status.QUEUED
        job.error = ""
        job.progress = ""
        job.worker = ""
        job.started_at = job.heartbeat_at = job.finished_at = None
        JobPart.objects.filter(job=job).delete()  # an earlier attempt's parts never merge
        run = Run.objects.filter(idempotency_key=job.idempotency_key).first()
        if run is not None:
            job.status, job.run, job.finished_at = Job.Status.SUCCEEDED, run, timezone.now()
            job.progress = "the earlier attempt had stored its run"
        job.save()
    if job.status == Job.Status.QUEUED:
        _send(job)
    return job


def _stale(job: Job, now: datetime) -> bool:
    seen = job.heartbeat_at or job.started_at
    return seen is None or now - seen > timedelta(seconds=settings.JOB_HEARTBEAT_TIMEOUT_S)


def job_event(
    *,
    job: Job,
    event: str,
    attempt: int,
    worker: str,
    member: int | None = None,
    message: str = "",
    now: datetime | None = None,
) -> EventAnswer:
    """A worker's report (`member`: which share, for a job fanned out over several workers).
    The answer tells it whether to go on: a finished, cancelled or superseded job never
    starts again, so a redelivered message cannot make a second run."""
    now = now or timezone.now()
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job.pk)
        if member is not None:
            return member_event(job, member, event, attempt, worker, message, now)
        if attempt != job.attempt:
            return EventAnswer(
                job.status, cancel=True, detail=f"superseded by attempt {job.attempt}"
            )
        if event == "started":
            return _started(job, worker, now)
        if event == "heartbeat":
            if job.status != Job.Status.RUNNING or job.worker != worker:
                return EventAnswer(job.status, cancel=True, detail=f"job is {job.status}")
            job.heartbeat_at = now
            job.progress = message[:500]
            job.save(update_fields=["heartbeat_at", "progress"])
            return EventAnswer(job.status, proceed=True)
        if event == "succeeded":
            return _succeeded(job, now)
        if event in ("failed", "cancelled"):
            if job.status == Job.Status.RUNNING and job.worker == worker:
                job.status = Job.Status.FAILED if event == "failed" else Job.Status.CANCELLED
                job.error = message[:2000] or event
                job.finished_at = now
                job.save(update_fields=["status", "error", "finished_at"])
            elif job.status == Job.Status.CANCELLED:
                job.progress = "stopped"
                job.save(update_fields=["progress"])
            return EventAnswer(job.status)
    raise JobError("event", f"unknown event {event!r}")


def _started(job: Job, worker: str, now: datetime) -> EventAnswer:
    if job.status == Job.Status.RUNNING and job.worker != worker and not _stale(job, now):
        return EventAnswer(job.status, detail=f"already running on {job.worker}")
    if job.status not in Job.ACTIVE:
        return EventAnswer(job.status, detail=f"job is {job.status}")
    takeover = job.status == Job.Status.RUNNING and job.worker != worker
    job.status = Job.Status.RUNNING
    job.worker = worker[:300]
    job.started_at = job.started_at if takeover else now
    job.heartbeat_at = now
    try:
        api_key = job_credentials(job)
    except CredentialError as exc:
        job.status, job.error, job.finished_at = Job.Status.FAILED, str(exc), now
        job.save(update_fields=["status", "error", "finished_at"])
        return EventAnswer(job.status, detail=str(exc))
    job.progress = "redelivered after the worker was lost" if takeover else "started"
    job.save(update_fields=["status", "worker", "started_at", "heartbeat_at", "progress"])
    return EventAnswer(job.status, proceed=True, api_key=api_key)


def _succeeded(job: Job, now: datetime) -> EventAnswer:
    # The run is found by the job's key, never by the id the worker claims.
    run = Run.objects.filter(idempotency_key=job.idempotency_key).first()
    if run is None:
        return EventAnswer(job.status, detail="no run with this job's idempotency key")
    job.run = run
    if job.status != Job.Status.CANCELLED:
        job.status = Job.Status.SUCCEEDED
        job.error = ""
    job.finished_at = now
    job.progress = f"run {run.pk}"
    job.save(update_fields=["run", "status", "error", "finished_at", "progress"])
    return EventAnswer(job.status)


def jobs_reap_stale(*, now: datetime | None = None) -> int:
    """Fail running jobs whose heartbeats stopped (worker killed, host lost). A job whose run
    did land (only the last report was lost) is marked succeeded instead."""
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.JOB_HEARTBEAT_TIMEOUT_S)
    reaped = 0
    for job_id in Job.objects.filter(
        status=Job.Status.RUNNING, heartbeat_at__lt=cutoff
    ).values_list("pk", flat=True):
        with transaction.atomic():
            job = Job.objects.select_for_update().get(pk=job_id)
            if job.status != Job.Status.RUNNING or not _stale(job, now):
                continue
            run = Run.objects.filter(idempotency_key=job.idempotency_key).first()
            if run is not None:
                job.status, job.run = Job.Status.SUCCEEDED, run
            else:
                job.status = Job.Status.FAILED
                job.error = (
                    f"no heartbeat from {job.worker or 'the worker'} for more than "
                    f"{settings.JOB_HEARTBEAT_TIMEOUT_S} s (worker killed or host lost); "
                    "retry to run it again"
                )
            job.finished_at = now
            job.save(update_fields=["status", "run", "error", "finished_at"])
            JobPart.objects.filter(job=job).delete()
            reaped += 1
    return reaped
