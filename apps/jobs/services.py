"""Writes for endpoints, jobs and schedules, and the one place that talks to the broker."""

import functools
import itertools
import logging
import math
import secrets
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from celery import Celery
from django.conf import settings
from django.core.cache import cache
from django.db import models, transaction
from django.utils import timezone
from pydantic import ValidationError

from apps.accounts.models import ApiToken, Organization
from apps.accounts.services import audit_record
from apps.catalog.models import Deployment, Scenario
from apps.catalog.services import deployment_upsert
from apps.jobs import cron
from apps.jobs.allowlist import endpoint_check
from apps.jobs.crypto import CredentialError, decrypt, encrypt, job_binding_secret
from apps.jobs.models import Endpoint, Job, Pool, Schedule
from apps.runs.models import Run
from workers import results as doc
from workers.celery import TASK_ACCURACY, TASK_LOAD, make_app, pool_queue
from workers.tasks import JobSpec, LoadSpec

log = logging.getLogger(__name__)


class JobError(ValueError):
    """A job that cannot be queued as asked; `field` names what is wrong."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class BrokerUnavailable(Exception):
    """The broker did not take the job; the job is marked failed and can be retried."""


@dataclass(frozen=True)
class _Facts:
    # Duck-types the parts of a ResultDocument that deployment_upsert reads.
    model: doc.ModelInfo
    deployment: doc.Deployment

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
    model = doc.ModelInfo.model_validate(facts["model"])
    deployment = doc.Deployment.model_validate(facts["deployment"])
    return {
        "model": model.model_dump(mode="json", exclude_none=True),
        "deployment": deployment.model_dump(mode="json", exclude_none=True),
    }


def deployment_from_facts(*, model: dict[str, Any], deployment: dict[str, Any]) -> Deployment:
    """The catalog deployment for these facts (created when new). Raises pydantic errors."""
    facts = _Facts(doc.ModelInfo.model_validate(model), doc.Deployment.model_validate(deployment))
    return deployment_upsert(document=facts)  # type: ignore[arg-type]


def endpoint_create(
    *,
    org: Organization,
    name: str,
    url: str,
    deployment: Deployment,
    facts: dict[str, Any] | None = None,
    served_model: str = "",
    api: str = Endpoint.Api.COMPLETIONS,
    pool: str = "",
    api_key: str = "",
    simulated: bool = False,
    is_public: bool = True,
) -> Endpoint:
    """Register an endpoint. Raises EndpointRefused when the URL is outside the allowlist,
    JobError when the pool is neither the organization's own nor a first-party pool."""
    clean_url = endpoint_check(url)
    pool = pool_queue(pool or deployment.accelerator.sku)
    pool_check(org=org, pool=pool)
    facts = _validated_facts(facts) if facts else facts_of(deployment)
    return Endpoint.objects.create(
        org=org,
        deployment=deployment,
        facts=facts,
        name=name,
        url=clean_url,
        served_model=served_model or facts["model"]["name"],
        api=api,
        pool=pool,
        api_key_encrypted=encrypt(api_key),
        simulated=simulated,
        is_public=is_public,
    )


def endpoint_set_key(*, endpoint: Endpoint, api_key: str) -> None:
    endpoint.api_key_encrypted = encrypt(api_key)
    endpoint.save(update_fields=["api_key_encrypted"])


# Job specs ---------------------------------------------------------------------------------


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: Any) -> bool:
    return (_whole(value) or isinstance(value, float)) and math.isfinite(value)


def job_options_check(kind: str, options: dict[str, Any]) -> None:
    """Raise JobError naming the option when it is of the wrong type or outside its bound
    (settings JOB_MAX_*): a job or schedule must never ask a worker for unbounded work."""
    if not isinstance(options, dict):
        raise JobError("options", "an object of job options")
    levels, top = settings.JOB_MAX_LEVELS, settings.JOB_MAX_CONCURRENCY
    known = {"concurrency", "rates", "requests", "duration_s", "warmup", "seed", "limit"}
    for name in options:
        if name not in known:
            raise JobError(name, f"unknown option (known: {', '.join(sorted(known))})")

    def whole(name: str, low: int, high: int) -> None:
        value = options.get(name)
        if value is not None and not (_whole(value) and low <= value <= high):
            raise JobError(name, f"an integer from {low} to {high}")

    concurrency, rates = options.get("concurrency"), options.get("rates")
    if kind == Job.Kind.ACCURACY:
        whole("concurrency", 1, top)
    elif concurrency is not None and not (
        isinstance(concurrency, list)
        and 0 < len(concurrency) <= levels
        and all(_whole(c) and 1 <= c <= top for c in concurrency)
    ):
        raise JobError("concurrency", f"a list of 1 to {levels} integers from 1 to {top}")
    if rates is not None and not (
        isinstance(rates, list)
        and 0 < len(rates) <= levels
        and all(_number(r) and 0 < r <= settings.JOB_MAX_RATE for r in rates)
    ):
        raise JobError(
            "rates", f"a list of 1 to {levels} numbers above 0, at most {settings.JOB_MAX_RATE}"
        )
    whole("requests", 1, settings.JOB_MAX_REQUESTS)
    whole("warmup", 0, settings.JOB_MAX_WARMUP)
    whole("seed", 0, 2**31 - 1)
    whole("limit", 1, settings.JOB_MAX_ACCURACY_ITEMS)
    duration = options.get("duration_s")
    if duration is not None and not (
        _number(duration) and 0 < duration <= settings.JOB_MAX_DURATION_S
    ):
        raise JobError("duration_s", f"seconds above 0, at most {settings.JOB_MAX_DURATION_S}")


def _load_spec(scenario: Scenario, options: dict[str, Any]) -> dict[str, Any]:
    concurrency = options.get("concurrency") or scenario.concurrency or [1]
    rates = options.get("rates")
    if scenario.length_spread is None or scenario.prefix_cache_hit_rate is None:
        # An imported scenario may leave these unstated; a load run needs them, not a guess.
        raise JobError("scenario", f"{scenario.slug} does not state its length spread and prefix")
    if scenario.arrival == "open" and not rates:
        raise JobError("rates", "an open-loop scenario needs arrival rates (requests/s)")
    job_options_check(Job.Kind.LOAD, {"concurrency": concurrency, "rates": rates})
    requests, duration = None, None
    if options.get("requests"):
        requests = options["requests"]
    elif options.get("duration_s"):
        duration = options["duration_s"]
    elif scenario.request_count:
        requests = scenario.request_count
    elif scenario.duration_s:
        duration = scenario.duration_s
    else:
        # Enough requests per level for stable percentiles at the highest concurrency.
        requests = max(32, 4 * max(concurrency))
    load = {
        "concurrency": concurrency,
        "rates": rates or None,
        "requests": requests,
        "duration_s": duration,
        "warmup": options.get("warmup", scenario.warmup_requests),
        "seed": options.get("seed", 0),
    }
    try:
        return LoadSpec.model_validate(load).model_dump(mode="json")
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        raise JobError(str(first["loc"][0]), first["msg"]) from None


def _scenario_doc(scenario: Scenario, load: dict[str, Any]) -> dict[str, Any]:
    slo = None
    if scenario.slo_ttft_ms or scenario.slo_tpot_ms or scenario.slo_e2el_ms or scenario.slo_bounds:
        # The whole SLO, so the worker's goodput and early stop judge what the board judges.
        slo = {
            "ttft_ms": scenario.slo_ttft_ms,
            "ttft_percentile": scenario.slo_ttft_percentile,
            "tpot_ms": scenario.slo_tpot_ms,
            "e2el_ms": scenario.slo_e2el_ms,
            "bounds": scenario.slo_bounds,
            "min_success_rate": scenario.slo_min_success_rate,
        }
    return {
        "preset": scenario.slug if scenario.is_preset else None,
        "name": scenario.name,
        "input_tokens": scenario.input_tokens,
        "output_tokens": scenario.output_tokens,
        "length_spread": scenario.length_spread,
        "prefix_cache_hit_rate": scenario.prefix_cache_hit_rate,
        "dataset": scenario.dataset,
        "arrival": scenario.arrival,
        "warmup_requests": load["warmup"],
        "duration_s": load["duration_s"],
        "request_count": load["requests"],
        "slo": slo,
    }


def heartbeat_interval_s() -> float:
    configured = getattr(settings, "JOB_HEARTBEAT_INTERVAL_S", None)
    return float(configured or max(1.0, settings.JOB_HEARTBEAT_TIMEOUT_S / 4))


# Version 2: the endpoint's key is not in the message. A worker gets it in the server's
# answer to its `started` report (job_event), over the API with its organization's token,
# so nothing a broker holds (queues, unacked messages, RDB/AOF files) carries a secret.
JOB_SPEC_VERSION = 2


def job_spec(job: Job) -> dict[str, Any]:
    """The message a worker receives: everything but the endpoint's key (see job_credentials)."""
    endpoint = job.endpoint
    spec: dict[str, Any] = {
        "version": JOB_SPEC_VERSION,
        "job_id": job.pk or 0,
        "attempt": job.attempt,
        "idempotency_key": job.idempotency_key,
        # Binds the result document to this job (origin "scheduled", checked at ingestion).
        # Unlike the endpoint's key it opens nothing: it only vouches for one job's document.
        "job_secret": job_binding_secret(job.idempotency_key),
        "kind": job.kind,
        "provenance": "simulated" if endpoint.simulated else "measured",
        "private": not endpoint.is_public,
        "server_url": settings.INFERBOARD_PUBLIC_URL,
        "heartbeat_s": heartbeat_interval_s(),
        "endpoint": {
            "url": endpoint.url,
            "served_model": endpoint.served_model,
            "api": endpoint.api,
        },
        **endpoint.facts,
    }
    if job.kind == Job.Kind.LOAD:
        load = _load_spec(job.scenario, job.options)
        spec["load"] = load
        spec["scenario"] = _scenario_doc(job.scenario, load)
    else:
        spec["protocol"] = job.protocol
        spec["limit"] = job.options.get("limit")
        spec["concurrency"] = job.options.get("concurrency", 8)
    JobSpec.model_validate(spec)
    return spec


def job_credentials(job: Job) -> str | None:
    """The endpoint's key in clear, for the worker that has just started the job; None when
    the endpoint has none. Raises CredentialError when it cannot be decrypted."""
    return decrypt(job.endpoint.api_key_encrypted) or None


# Jobs --------------------------------------------------------------------------------------


@functools.cache
def _celery(broker_url: str) -> Celery:
    return make_app(broker_url)


def celery_app() -> Celery:
    return _celery(settings.CELERY_BROKER_URL)


def publish(name: str, spec: dict[str, Any], *, queue: str, task_id: str, label: str) -> None:
    """Put a task on the broker. What Celery shows of the arguments (logs, monitoring) is
    `label`: the spec names the endpoint's URL, which is the organization's business."""
    app = celery_app()
    # An explicit connection: Celery would let env CELERY_BROKER_URL override settings.
    with app.connection_for_write(settings.CELERY_BROKER_URL) as connection:
        app.send_task(
            name,
            args=[spec],
            queue=queue,
            task_id=task_id,
            connection=connection,
            argsrepr=label,
            kwargsrepr="{}",
            retry=True,
            retry_policy={"max_retries": 3, "interval_start": 0.2, "interval_step": 0.5},
        )


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
    """Register first-party pools (the service's own Celery workers), idempotently."""
    return [Pool.objects.get_or_create(name=pool_queue(n), org=None)[0] for n in names]


def pool_create(*, org: Organization, name: str) -> Pool:
    """Claim a pool name for the organization's own hosts (their agents take its jobs). Names
    are the organization's own: another organization may use the same one. Raises JobError
    for the name of a first-party pool (whose endpoints go to the service's workers)."""
    queue = pool_queue(name)
    existing = Pool.objects.filter(name=queue, org=org).first()
    if existing is not None:
        return existing
    if Pool.objects.filter(name=queue, org__isnull=True).exists():
        raise JobError("name", f"pool {queue!r} is one of the service's own pools")
    return Pool.objects.create(name=queue, org=org)


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
    try:
        publish(
            name,
            spec,
            queue=job.pool,
            task_id=job.task_id,
            label=f"(job {job.pk}, attempt {job.attempt})",
        )
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
    pool_check(org=endpoint.org, pool=endpoint.pool)
    if kind == Job.Kind.LOAD and scenario is None:
        raise JobError("scenario", "a load job needs a scenario")
    if kind == Job.Kind.ACCURACY:
        _check_protocol(protocol)
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


def _check_protocol(protocol: str) -> None:
    from workers.accuracy.protocols import get_protocol

    try:
        get_protocol(protocol)
    except (KeyError, ValueError) as exc:
        raise JobError("protocol", str(exc).strip("'\"") or "unknown protocol") from None


def job_cancel(*, job: Job, actor: str = "") -> Job:
    """Queued jobs never start; running ones stop at their next heartbeat."""
    with transaction.atomic():
        job = Job.objects.select_for_update().select_related("endpoint__org").get(pk=job.pk)
        if job.is_active:
            job.status = Job.Status.CANCELLED
            job.finished_at = timezone.now()
            job.error = "cancelled"
            job.save(update_fields=["status", "finished_at", "error"])
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
            raise JobError("status", f"only failed or cancelled jobs can be retried ({job.status})")
        # Refused before anything changes: a retry that cannot be sent must not leave the
        # job queued forever (the reaper only looks at running jobs).
        endpoint_check(job.endpoint.url)
        job.attempt += 1
        job.status = Job.Status.QUEUED
        job.error = ""
        job.progress = ""
        job.worker = ""
        job.started_at = job.heartbeat_at = job.finished_at = None
        run = Run.objects.filter(idempotency_key=job.idempotency_key).first()
        if run is not None:
            job.status, job.run, job.finished_at = Job.Status.SUCCEEDED, run, timezone.now()
            job.progress = "the earlier attempt had stored its run"
        job.save()
    if job.status == Job.Status.QUEUED:
        _send(job)
    return job


@dataclass(frozen=True)
class EventAnswer:
    status: str
    proceed: bool = False
    cancel: bool = False
    detail: str = ""
    # Only in the answer that lets a worker start: the endpoint's key (job_credentials).
    api_key: str | None = field(default=None, repr=False)


def _stale(job: Job, now: datetime) -> bool:
    seen = job.heartbeat_at or job.started_at
    return seen is None or now - seen > timedelta(seconds=settings.JOB_HEARTBEAT_TIMEOUT_S)


def job_event(
    *,
    job: Job,
    event: str,
    attempt: int,
    worker: str,
    message: str = "",
    now: datetime | None = None,
) -> EventAnswer:
    """A worker's report. The answer tells it whether to go on: a finished, cancelled or
    superseded job never starts again, so a redelivered message cannot make a second run."""
    now = now or timezone.now()
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job.pk)
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
            reaped += 1
    return reaped


# Schedules ---------------------------------------------------------------------------------


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
        _check_protocol(schedule.protocol)


def schedule_save(*, schedule: Schedule, now: datetime | None = None) -> Schedule:
    """Validate and store a new or edited schedule, and work out when it next fires."""
    schedule_validate(schedule)
    schedule.next_run_at = schedule_next_run(schedule, now or timezone.now())
    schedule.save()
    return schedule


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
