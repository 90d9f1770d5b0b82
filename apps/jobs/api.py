"""REST API for endpoints, jobs and schedules. Mounted at the API root: /api/v1/endpoints ...

Everything here belongs to an organization: a Bearer token sees and acts on its own
organization's endpoints and jobs only (others are 404). Endpoint keys are write-only: only a
worker starting a job gets one, in the answer to its `started` report.
"""

import asyncio
import time
from dataclasses import asdict
from datetime import datetime
from typing import Any, Literal

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections
from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from ninja import Field, Router, Schema, Status
from pydantic import field_validator

from apps.accounts.auth import BearerToken
from apps.accounts.ratelimit import RateLimited, WriteThrottle
from apps.accounts.scoping import actor_of
from apps.accounts.services import audit_record
from apps.api_errors import Errors, error_body
from apps.api_params import (
    STRICT_BODY,
    Finite,
    Input,
    NonNegativeWhole,
    PositiveWhole,
    RowId,
    Whole,
)
from apps.catalog.models import Scenario
from apps.catalog.selectors import deployments_visible, scenario_list
from apps.jobs import members, schedules, selectors, services, specs
from apps.jobs.models import Endpoint, Job, Pool, Schedule
from workers import result_facts
from workers.celery import POOL_NAME_PATTERN, pool_name_refusal
from workers.submit import EVENTS, JOB_SECRET_HEADER

router = Router(tags=["jobs"], auth=BearerToken())


class EndpointIn(Input):
    model_config = STRICT_BODY

    name: str = Field(min_length=1, max_length=200)
    url: str = Field(
        min_length=1,
        max_length=2000,
        pattern=r"^[Hh][Tt][Tt][Pp][Ss]?://[^\x00]*$",
        description="http(s), inside the operator's allowlist (ENDPOINT_ALLOWLIST)",
    )
    deployment_id: RowId | None = Field(None, description="an existing deployment, or:")
    model: result_facts.ModelInfo | None = Field(None, description="model facts (with deployment)")
    deployment: result_facts.Deployment | None = Field(None, description="deployment facts")
    served_model: str = Field("", max_length=200, description="name sent in requests")
    api: Literal["completions", "chat"] = "completions"
    pool: str = Field(
        "", max_length=95, pattern=r"^[A-Za-z0-9._-]*$", description="default: pool.<sku>"
    )
    api_key: str = Field("", max_length=4000, description="write-only; stored encrypted")
    simulated: bool = Field(False, description="a test server: runs are labelled simulated")
    private: bool = False


class EndpointOut(Schema):
    id: int
    name: str
    url: str
    pool: str
    served_model: str
    api: str
    deployment_id: int
    deployment: str
    has_api_key: bool
    simulated: bool
    is_public: bool
    created_at: datetime

    @staticmethod
    def resolve_deployment(endpoint: Endpoint) -> str:
        return str(endpoint.deployment)


class RunRequest(Input):
    model_config = STRICT_BODY

    kind: Literal["load", "accuracy"] = "load"
    scenario: str | None = Field(None, description="scenario slug (load jobs)")
    protocol: str = Field("", description="accuracy protocol, e.g. gsm8k-5shot-v1")
    concurrency: list[Whole] | None = Field(None, description="closed-loop levels")
    rates: list[float] | None = Field(None, description="open-loop levels, requests/s")
    requests: PositiveWhole | None = Field(None, description="measured requests per level")
    duration_s: float | None = Field(None, gt=0)
    warmup: NonNegativeWhole | None = Field(None)
    limit: PositiveWhole | None = Field(None, description="accuracy items")
    # The bound is settings.JOB_MAX_MEMBERS, checked with the other options
    # (specs.job_options_check) so a refusal names the option and the live bound.
    members: PositiveWhole | None = Field(
        None,
        description=f"load jobs: workers of the pool sharing the job "
        f"(at most {settings.JOB_MAX_MEMBERS})",
    )
    # What the CLI's load flags ask for (workers/loadgen/load_spec.py); bounds are checked
    # with the other options (specs.job_options_check), naming the option.
    arrival: Literal["poisson", "gamma"] | None = Field(
        None, description="open loop: the arrival process"
    )
    burstiness: float | None = Field(None, description="gamma shape: 1 is Poisson, <1 burstier")
    max_concurrency: Whole | None = Field(None, description="open loop: cap on requests in flight")
    prefix_groups: Whole | None = Field(None, description="distinct shared prefixes")
    early_stop: bool | None = Field(None, description="stop at the first saturated level")
    processes: Whole | None = Field(None, description="client processes sharing each level")
    client_cpu_limit: float | None = Field(
        None, description="a level is client-bound past this share of a core"
    )
    client_lag_limit_ms: float | None = Field(
        None, description="a level is client-bound when the event loop runs this late (p99)"
    )


class JobOut(Schema):
    id: int
    url: str
    status: str
    kind: str
    endpoint_id: int
    endpoint: str
    pool: str
    scenario: str | None
    protocol: str
    attempt: int
    error: str
    progress: str
    worker: str
    run_id: int | None
    run_url: str | None
    created_at: datetime
    started_at: datetime | None
    heartbeat_at: datetime | None
    finished_at: datetime | None

    @staticmethod
    def resolve_url(job: Job) -> str:
        return f"/api/v1/jobs/{job.pk}"

    @staticmethod
    def resolve_endpoint(job: Job) -> str:
        return job.endpoint.name

    @staticmethod
    def resolve_scenario(job: Job) -> str | None:
        return job.scenario.slug if job.scenario_id else None

    @staticmethod
    def resolve_run_url(job: Job) -> str | None:
        return f"/api/v1/runs/{job.run_id}" if job.run_id else None


class EventIn(Input):
    model_config = STRICT_BODY

    # The protocol's event names (workers/submit.py EVENTS) as a Literal made at run time,
    # so the API's schema lists them; mypy reads a Literal of written values only.
    event: Literal[EVENTS]  # type: ignore[valid-type]
    attempt: Whole = Field(ge=1)
    worker: str = Field(min_length=1, max_length=300)
    message: str = Field("", max_length=2000)
    run_id: RowId | None = Field(None, description="a hint only: the run is found by job key")
    member: NonNegativeWhole | None = Field(
        None, description="a fanned-out job: the member reporting"
    )


class EventOut(Schema):
    job_id: int
    status: str
    proceed: bool
    cancel: bool
    detail: str
    api_key: str | None = Field(
        None,
        description="only in the answer to `started` that lets this worker run the job: the "
        "endpoint's key (job messages never carry it)",
    )


class ScheduleIn(Input):
    model_config = STRICT_BODY

    kind: Literal["load", "accuracy"] = "load"
    scenario: str | None = None
    protocol: str = ""
    options: dict[str, Any] = Field(default_factory=dict)
    cron: str = Field("", max_length=100, description="five fields, UTC, e.g. '0 2 * * *'")
    interval_minutes: PositiveWhole | None = Field(None)
    enabled: bool = True


class SchedulePatch(Input):
    model_config = STRICT_BODY

    scenario: str | None = None
    protocol: str | None = None
    options: dict[str, Any] | None = None
    cron: str | None = Field(None, max_length=100)
    interval_minutes: PositiveWhole | None = Field(None)
    enabled: bool | None = None


class ScheduleOut(Schema):
    id: int
    endpoint_id: int
    kind: str
    scenario: str | None
    protocol: str
    options: dict[str, Any]
    cron: str
    interval_minutes: int | None
    enabled: bool
    next_run_at: datetime | None
    last_run_at: datetime | None

    @staticmethod
    def resolve_scenario(schedule: Schedule) -> str | None:
        return schedule.scenario.slug if schedule.scenario_id else None


def _endpoint(request: HttpRequest, endpoint_id: int) -> Endpoint:
    return get_object_or_404(Endpoint, pk=endpoint_id, org=request.auth.org)


def _job(request: HttpRequest, job_id: int) -> Job:
    return get_object_or_404(
        Job.objects.select_related("endpoint", "scenario"),
        pk=job_id,
        endpoint__org=request.auth.org,
    )


def _scenario(request: HttpRequest, slug: str | None) -> Scenario | None:
    """A scenario the caller's organization may use: curated, public, or its own."""
    return scenario_list(org=request.auth.org).filter(slug=slug).first() if slug else None


@router.post(
    "/endpoints",
    response={201: EndpointOut, 401: Errors, 404: Errors, 409: Errors, 422: Errors},
    summary="Register an endpoint",
)
def create_endpoint(request: HttpRequest, body: EndpointIn):
    """Refused with 422 (path `url`) when the URL is outside the server's allowlist; nothing
    is stored and nothing is sent. The key is stored encrypted and never returned."""
    org = request.auth.org
    deployment, facts = None, None
    if body.deployment_id is not None:
        # Only a deployment the caller could already see: registering an endpoint must not
        # reveal the facts of another organization's private deployment.
        deployment = get_object_or_404(deployments_visible(org=org), pk=body.deployment_id)
    elif body.model is not None and body.deployment is not None:
        facts = {
            "model": body.model.model_dump(mode="json"),
            "deployment": body.deployment.model_dump(mode="json"),
        }
    # One transaction in the service: a refusal after the deployment was looked up leaves no
    # catalog rows. Its refusals (JobError, EndpointRefused) are answered by apps.api.api.
    endpoint = services.endpoint_register(
        org=org,
        actor=actor_of(request),
        name=body.name,
        url=body.url,
        deployment=deployment,
        facts=facts,
        is_public=not body.private,
        **body.model_dump(include={"served_model", "api", "pool", "api_key", "simulated"}),
    )
    return Status(201, endpoint)


@router.get("/endpoints", response={200: list[EndpointOut], 401: Errors}, summary="Endpoints")
def list_endpoints(request: HttpRequest):
    return selectors.endpoints_of(org=request.auth.org)


@router.post(
    "/endpoints/{endpoint_id}/runs",
    response={202: JobOut, 401: Errors, 404: Errors, 422: Errors, 429: Errors, 503: Errors},
    summary="Run now: queue a job on the endpoint's pool",
)
def run_endpoint(request: HttpRequest, endpoint_id: int, body: RunRequest):
    """202 with the job (poll `GET /jobs/{id}`). 422 names the wrong field, or `url` when the
    endpoint is now outside the allowlist; 503 with Retry-After when the broker is down (the
    job is stored as failed; retry it).
    429 with Retry-After past the write limits (RATE_LIMIT_TOKEN_WRITES, _ORG_WRITES)."""
    endpoint = _endpoint(request, endpoint_id)
    scenario = _scenario(request, body.scenario)
    if body.scenario and scenario is None:
        return Status(422, error_body("scenario", f"unknown scenario {body.scenario!r}"))
    options = body.model_dump(
        exclude={"kind", "scenario", "protocol"}, exclude_none=True, mode="json"
    )
    job = services.job_enqueue(
        endpoint=endpoint,
        kind=body.kind,
        scenario=scenario,
        protocol=body.protocol,
        options=options,
        requested_by=f"token {request.auth.prefix}",
    )
    return Status(202, job)


@router.get("/jobs/{job_id}", response={200: JobOut, 401: Errors, 404: Errors}, summary="A job")
def get_job(request: HttpRequest, job_id: int):
    return _job(request, job_id)


@router.get("/endpoints/{endpoint_id}/jobs", response={200: list[JobOut], 401: Errors, 404: Errors})
def list_jobs(request: HttpRequest, endpoint_id: int, limit: int = 50):
    endpoint = _endpoint(request, endpoint_id)
    return endpoint.jobs.select_related("endpoint", "scenario")[: min(max(limit, 1), 200)]


@router.post(
    "/jobs/{job_id}/cancel", response={200: JobOut, 401: Errors, 404: Errors}, summary="Cancel"
)
def cancel_job(request: HttpRequest, job_id: int):
    """A queued job never starts; a running one stops at its next heartbeat."""
    return services.job_cancel(job=_job(request, job_id), actor=actor_of(request))


@router.post(
    "/jobs/{job_id}/retry",
    response={
        202: JobOut,
        401: Errors,
        404: Errors,
        409: Errors,
        422: Errors,
        429: Errors,
        503: Errors,
    },
    summary="Retry a failed or cancelled job",
)
def retry_job(request: HttpRequest, job_id: int):
    job = services.job_retry(job=_job(request, job_id))
    return Status(202, job)


@router.post(
    "/jobs/{job_id}/events",
    response={200: EventOut, 401: Errors, 404: Errors, 422: Errors},
    summary="Worker report: started, heartbeat, succeeded, failed, cancelled",
    throttle=[WriteThrottle(kind="reports")],
)
def job_event(request: HttpRequest, job_id: int, body: EventIn):
    """For workers. `proceed` false on `started` means: do not run (finished, cancelled or
    running elsewhere); `cancel` true on a heartbeat means: stop now. The answer that lets a
    worker start carries the endpoint's key (`api_key`): the job's message does not."""
    job = _job(request, job_id)
    answer = services.job_event(job=job, **body.model_dump(exclude={"run_id"}))
    return {"job_id": job.pk, **asdict(answer)}


class PartIn(Input):
    model_config = STRICT_BODY

    attempt: Whole = Field(ge=1)
    member: Whole = Field(ge=0)
    worker: str = Field(min_length=1, max_length=300)
    part: dict[str, Any] = Field(description="workers.loadgen.members.MemberPart")


class PartOut(Schema):
    job_id: int
    status: str
    run_id: int | None


@router.post(
    "/jobs/{job_id}/parts",
    response={200: PartOut, 401: Errors, 404: Errors, 409: Errors, 422: Errors},
    summary="Worker: one member's share of a fanned-out load job",
    throttle=[WriteThrottle(kind="reports")],
)
def job_part(request: HttpRequest, job_id: int, body: PartIn):
    """For workers. The last member's part makes the job's one run (`run_id`); 409 when the
    job no longer runs (a member failed: every part is discarded)."""
    job = members.job_part_submit(
        job=_job(request, job_id),
        member=body.member,
        attempt=body.attempt,
        worker=body.worker,
        part=body.part,
        token=request.auth,
        job_secret=request.headers.get(JOB_SECRET_HEADER),
    )
    return {"job_id": job.pk, "status": job.status, "run_id": job.run_id}


class PoolIn(Input):
    model_config = STRICT_BODY

    name: str = Field(
        min_length=1,
        max_length=90,
        pattern=POOL_NAME_PATTERN,
        description="e.g. acme-h100: ASCII letters, digits, '.', '_' and '-'; compared without "
        "case or trailing dots",
    )

    @field_validator("name", mode="before")
    @classmethod
    def _no_look_alikes(cls, value: Any) -> Any:
        # Said before the pattern is, so the error names the invisible or look-alike character.
        if isinstance(value, str) and (refused := pool_name_refusal(value)):
            raise ValueError(f"the pool name {refused}")
        return value


class PoolOut(Schema):
    name: str
    agent: bool


class AgentClaimOut(Schema):
    job_id: int
    spec: dict[str, Any]


AGENT_WAIT_MAX_S = 30


@router.post(
    "/pools",
    response={201: PoolOut, 401: Errors, 409: Errors},
    summary="Claim a pool for your organization's own hosts (inferboard-worker agent)",
)
def create_pool(request: HttpRequest, body: PoolIn):
    """Jobs on this pool go only to agents holding one of your organization's tokens; no
    broker is involved. A name has one owner: 409 (naming `name`) when it is another
    organization's, a first-party pool's, or reserved by the operator (FIRST_PARTY_POOLS, or
    FIRST_PARTY_POOL_PREFIX)."""
    pool = services.pool_create(org=request.auth.org, name=body.name)
    audit_record(
        org=request.auth.org, actor=actor_of(request), action="pool.created", target=pool.name
    )
    return Status(201, {"name": pool.name, "agent": True})


@router.post(
    "/agent/claim",
    response={200: AgentClaimOut, 204: None, 401: Errors, 404: Errors},
    summary="Agent long-poll: the next queued job of your organization's pool",
    throttle=[WriteThrottle(kind="reports")],
)
async def agent_claim(
    request: HttpRequest,
    pool: str,
    wait: Finite = 20,  # "nan" would pass min() and max() and never reach the deadline
    worker: str = "agent",
):
    """Waits up to `wait` seconds (at most 30) for a job; 204 when none came. The job is
    offered, not started: run it by reporting `started` as any worker does. 404 for a pool
    that is not your organization's (another's looks the same as none). 429 with Retry-After
    past AGENT_MAX_POLLS_PER_TOKEN polls open at once for one token."""
    # Async, so an idle agent's long poll waits on the event loop, not on a server thread.
    row = await Pool.objects.filter(name=pool, org=request.auth.org).afirst()
    if row is None:
        return Status(404, error_body("pool", f"your organization has no pool {pool!r}"))
    if not await _no_cache_io(services.agent_poll_open, request.auth):
        raise RateLimited("token's open long polls", AGENT_WAIT_MAX_S)
    try:
        return await _agent_wait(row, min(max(wait, 0.0), AGENT_WAIT_MAX_S), worker)
    finally:
        await _no_cache_io(services.agent_poll_close, request.auth)


# While a poll waits it reads the pool's wake-up counter in the cache every half second (a
# job queued on the pool bumps it) and asks the database only when it moved, or every
# AGENT_RECHECK_S in any case (an offer whose agent died is made again; the cache may be down).
AGENT_RECHECK_S = 10.0


def _no_cache_io(function, *args):
    # The cache client is blocking: off the event loop, in any thread.
    return sync_to_async(function, thread_sensitive=False)(*args)


async def _agent_wait(row: Pool, wait: float, worker: str):
    deadline = time.monotonic() + wait
    while True:
        seen = await _no_cache_io(services.agent_pool_version, row)
        job = await sync_to_async(services.job_claim)(pool=row, worker=worker)
        if job is not None:
            return {"job_id": job.pk, "spec": await sync_to_async(specs.job_spec)(job)}
        # Give the connection back while waiting (one past its age, as a pooled one always is):
        # otherwise each idle agent holds one of apps/serving.py's pool for its whole poll.
        await sync_to_async(close_old_connections)()
        recheck = time.monotonic() + AGENT_RECHECK_S
        while True:
            if time.monotonic() >= deadline:
                return Status(204, None)
            await asyncio.sleep(min(0.5, max(deadline - time.monotonic(), 0)))
            if time.monotonic() >= recheck:
                break
            if await _no_cache_io(services.agent_pool_version, row) != seen:
                break


@router.get("/endpoints/{endpoint_id}/schedules", response={200: list[ScheduleOut], 404: Errors})
def list_schedules(request: HttpRequest, endpoint_id: int):
    endpoint = _endpoint(request, endpoint_id)
    return endpoint.schedules.select_related("scenario")


@router.post(
    "/endpoints/{endpoint_id}/schedules",
    response={201: ScheduleOut, 401: Errors, 404: Errors, 422: Errors},
    summary="Measure an endpoint on a cron expression or an interval",
)
def create_schedule(request: HttpRequest, endpoint_id: int, body: ScheduleIn):
    endpoint = _endpoint(request, endpoint_id)
    scenario = _scenario(request, body.scenario)
    if body.scenario and scenario is None:
        return Status(422, error_body("scenario", f"unknown scenario {body.scenario!r}"))
    fields = body.model_dump(exclude={"scenario"})
    schedule = schedules.schedule_create(
        endpoint=endpoint, scenario=scenario, actor=actor_of(request), **fields
    )
    return Status(201, schedule)


@router.patch(
    "/schedules/{schedule_id}",
    response={200: ScheduleOut, 401: Errors, 404: Errors, 422: Errors},
    summary="Edit a schedule",
)
def edit_schedule(request: HttpRequest, schedule_id: int, body: SchedulePatch):
    schedule = get_object_or_404(Schedule, pk=schedule_id, endpoint__org=request.auth.org)
    changes = body.model_dump(exclude_unset=True)
    if "scenario" in changes:
        changes["scenario"] = _scenario(request, changes["scenario"])
    return schedules.schedule_edit(schedule=schedule, changes=changes)


@router.delete("/schedules/{schedule_id}", response={204: None, 401: Errors, 404: Errors})
def delete_schedule(request: HttpRequest, schedule_id: int):
    schedule = get_object_or_404(Schedule, pk=schedule_id, endpoint__org=request.auth.org)
    schedules.schedule_delete(schedule=schedule, actor=actor_of(request))
    return Status(204, None)
