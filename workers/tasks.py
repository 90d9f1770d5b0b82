"""Celery tasks a GPU-host worker runs: a load scenario or an accuracy protocol on an endpoint.

A task receives a job spec (see `JobSpec`): the endpoint's URL, the deployment facts, the
scenario or protocol, the job id and its idempotency key. It tells the server it started (the
server may say no: the job was cancelled, finished, or is running elsewhere); the answer that
lets it start carries the endpoint's key, which no broker message holds. It sends heartbeats
while it measures, submits the result document over the REST API with the job's idempotency
key, and reports the outcome. A redelivered message therefore
never makes a second run: the server refuses to start a finished job, and a re-submitted
document returns the first run.

Worker environment: INFERBOARD_TOKEN (required), INFERBOARD_SERVER_URL (else the spec's),
and the broker URL (see workers/celery.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import threading
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any, Literal

import httpx
from celery import signals
from celery.exceptions import Reject
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, model_validator

from workers.celery import TASK_ACCURACY, TASK_LOAD, app
from workers.env import env_int, env_str
from workers.loadgen.load_spec import LoadSpec
from workers.result_facts import Deployment, ModelInfo, Scenario
from workers.results import ResultDocument
from workers.submit import ServerClient, ServerError, ServerRefused

log = logging.getLogger(__name__)
TOKEN_ENV = "INFERBOARD_TOKEN"
SERVER_ENV = "INFERBOARD_SERVER_URL"


class EndpointSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str
    served_model: str = Field(description="the model name sent in requests")
    api: Literal["completions", "chat"] = "completions"
    # Only in version 1 messages (queued by an older server); version 2 leaves the key to
    # the server's answer to `started`.
    api_key: SecretStr | None = None
    timeout_s: float = Field(600.0, gt=0)


class JobSpec(BaseModel):
    """Everything a worker needs, and nothing that needs a database."""

    model_config = ConfigDict(extra="forbid")

    # 2: the endpoint's key comes in the answer to `started`, never in the message.
    version: Literal[1, 2] = 2
    job_id: int
    attempt: int = 1
    idempotency_key: str
    # Sent back with the result document (never inside it): the server then stores the run
    # as scheduled by this job rather than as a self-reported submission.
    job_secret: SecretStr | None = None
    kind: Literal["load", "accuracy"]
    provenance: Literal["measured", "simulated"] = "measured"
    private: bool = False
    server_url: str
    heartbeat_s: float = Field(15.0, gt=0)
    endpoint: EndpointSpec
    model: ModelInfo
    deployment: Deployment
    scenario: Scenario | None = None
    load: LoadSpec | None = None
    protocol: str | None = None
    limit: int | None = Field(None, ge=1)
    concurrency: int = Field(8, ge=1, description="accuracy requests in flight")
    # A load job fanned out over several workers of the pool (workers/loadgen/members.py):
    # this message runs share `member` of `members`, its first level from `start_at`.
    # The bound on `members` is the server's (settings.JOB_MAX_MEMBERS, checked when the job
    # is asked for); a worker checks only the shape, so it never refuses what the server allows.
    member: int = Field(0, ge=0)
    members: int = Field(1, ge=1)
    start_at: datetime | None = None

    @model_validator(mode="after")
    def _member_of_members(self) -> JobSpec:
        if self.member >= self.members:
            raise ValueError(f"member {self.member} is not one of {self.members} members")
        return self


class JobCancelled(Exception):
    pass


class UnreadableJob(ValueError):
    """The message is not a job spec this worker understands."""


class Progress:
    """The latest progress line, read by the heartbeat thread."""

    def __init__(self) -> None:
        self.text = "starting"


@signals.worker_init.connect
def _require_token(**_: Any) -> None:
    # Fail at startup, not at the first job: a worker without a token cannot report anything.
    if not env_str(TOKEN_ENV):
        # SystemExit, because Celery logs and swallows ordinary exceptions from receivers.
        raise SystemExit(f"{TOKEN_ENV} is not set: the worker needs an inferboard API token")


@app.task(name=TASK_LOAD, bind=True)
def run_load(self: Any, spec: dict[str, Any]) -> dict[str, Any]:
    return _run(self, spec)


@app.task(name=TASK_ACCURACY, bind=True)
def run_accuracy(self: Any, spec: dict[str, Any]) -> dict[str, Any]:
    return _run(self, spec)


def _run(task: Any, raw: dict[str, Any]) -> dict[str, Any]:
    # What Celery logs for this task if it fails, whatever the sender set: never the spec.
    job_id = raw.get("job_id") if isinstance(raw, dict) else None
    task.request.argsrepr = f"(job {job_id!r})"
    task.request.kwargsrepr = "{}"
    worker = f"{task.request.hostname or socket.gethostname()}:{os.getpid()}"
    try:
        spec = JobSpec.model_validate(raw)
    except ValidationError as exc:
        # Field paths only: pydantic's own message would quote the input, endpoint key included.
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
            for e in exc.errors(include_url=False, include_input=False)
        )
        # A server newer than this worker, say: fail the job visibly rather than leave it queued.
        _report_unreadable(raw, worker, problems)
        raise UnreadableJob(problems) from None
    try:
        return execute(spec, worker=worker)
    except ServerError as exc:
        # The server is unreachable before the job could start (the client already retried
        # with backoff): put the message back rather than measure what nobody can record.
        # Not task.retry(), whose messages and errors would carry the spec and its key.
        log.warning("job %s: server unreachable (%s); requeued", spec.job_id, exc)
        raise Reject(str(exc), requeue=True) from None


def _report_unreadable(raw: Any, worker: str, problems: str) -> None:
    try:
        job_id, attempt = int(raw["job_id"]), int(raw.get("attempt", 1))
        client = ServerClient(
            env_str(SERVER_ENV) or str(raw["server_url"]),
            env_str(TOKEN_ENV),
            attempts=2,
        )
        if client.event(job_id, "started", attempt=attempt, worker=worker).proceed:
            message = f"this worker cannot read the job (upgrade it?): {problems}"
            client.event(job_id, "failed", attempt=attempt, worker=worker, message=message)
    except (KeyError, TypeError, ValueError, ServerError, ServerRefused) as report_error:
        log.error("unreadable job spec, not reported: %s", report_error)


def execute(spec: JobSpec, *, worker: str, client: ServerClient | None = None) -> dict[str, Any]:
    """Run one job and report it; returns what happened (the server holds the truth)."""
    client = client or ServerClient(
        env_str(SERVER_ENV) or spec.server_url,
        env_str(TOKEN_ENV),
        attempts=env_int("INFERBOARD_SERVER_ATTEMPTS", 6, minimum=1),
    )

    member = spec.member if spec.members > 1 else None

    def report(event: str, message: str = "", run_id: int | None = None) -> None:
        try:
            client.event(
                spec.job_id,
                event,
                attempt=spec.attempt,
                worker=worker,
                message=message,
                run_id=run_id,
                member=member,
            )
        except (ServerError, ServerRefused) as exc:
            # Never re-run a finished measurement for a lost report: the server's reaper
            # finds the run by the job's idempotency key.
            log.error("job %s: could not report %s: %s", spec.job_id, event, exc)

    answer = client.event(
        spec.job_id, "started", attempt=spec.attempt, worker=worker, member=member
    )
    if not answer.proceed:
        log.info("job %s not started: %s", spec.job_id, answer.detail or answer.status)
        return {"job": spec.job_id, "outcome": "skipped", "detail": answer.detail}
    if answer.api_key:
        # The key travels over the API to the worker that runs the job, never in the message.
        endpoint = spec.endpoint.model_copy(update={"api_key": SecretStr(answer.api_key)})
        spec = spec.model_copy(update={"endpoint": endpoint})

    cancel = threading.Event()
    progress = Progress()
    stop = threading.Event()
    beat = threading.Thread(
        target=_heartbeats,
        args=(client, spec, worker, progress, cancel, stop),
        name=f"heartbeat-{spec.job_id}",
        daemon=True,
    )
    beat.start()
    try:
        document, part = measure(spec, progress=progress, cancel=cancel)
    except JobCancelled:
        stop.set()
        report("cancelled", "stopped on request")
        return {"job": spec.job_id, "outcome": "cancelled"}
    except Exception as exc:  # noqa: BLE001 - any failure of the measurement is the job's failure
        stop.set()
        log.exception("job %s failed", spec.job_id)
        report("failed", describe_failure(exc))
        return {"job": spec.job_id, "outcome": "failed"}
    finally:
        stop.set()
        beat.join(timeout=spec.heartbeat_s + 5)

    document.idempotency_key = spec.idempotency_key
    document.provenance = spec.provenance
    document.environment.worker = worker[:200]
    if cancel.is_set():
        report("cancelled", "stopped on request")
        return {"job": spec.job_id, "outcome": "cancelled"}
    if part is not None:
        return _submit_part(client, spec, part, worker=worker, report=report)
    try:
        run_id = client.submit(
            document,
            private=spec.private,
            job_secret=spec.job_secret.get_secret_value() if spec.job_secret else None,
        )
    except (ServerError, ServerRefused) as exc:
        report("failed", f"result not accepted: {exc}")
        return {"job": spec.job_id, "outcome": "failed"}
    report("succeeded", f"run {run_id}", run_id=run_id)
    return {"job": spec.job_id, "outcome": "succeeded", "run": run_id}


def _submit_part(
    client: ServerClient, spec: JobSpec, part: Any, *, worker: str, report: Any
) -> dict[str, Any]:
    """A member's share goes to the server as a part; the last part in makes the run."""
    try:
        answer = client.submit_part(
            spec.job_id,
            part.model_dump(mode="json", by_alias=True, exclude_none=True),
            attempt=spec.attempt,
            member=spec.member,
            worker=worker,
            job_secret=spec.job_secret.get_secret_value() if spec.job_secret else None,
        )
    except (ServerError, ServerRefused) as exc:
        report("failed", f"part not accepted: {exc}")
        return {"job": spec.job_id, "outcome": "failed", "member": spec.member}
    return {"job": spec.job_id, "outcome": "submitted", "member": spec.member, **answer}


def _heartbeats(
    client: ServerClient,
    spec: JobSpec,
    worker: str,
    progress: Progress,
    cancel: threading.Event,
    stop: threading.Event,
) -> None:
    while not stop.wait(spec.heartbeat_s):
        try:
            answer = client.event(
                spec.job_id,
                "heartbeat",
                attempt=spec.attempt,
                worker=worker,
                message=progress.text,
                retries=2,
                member=spec.member if spec.members > 1 else None,
            )
        except (ServerError, ServerRefused) as exc:
            # A missed heartbeat is not fatal; the server's timeout is several intervals long.
            log.warning("job %s heartbeat failed: %s", spec.job_id, exc)
            continue
        if answer.cancel:
            log.info("job %s: the server asks to stop (%s)", spec.job_id, answer.detail)
            cancel.set()


def describe_failure(exc: BaseException) -> str:
    """A job's stored error: the failure class for anything that went wrong on the wire.

    The text of an HTTP client error names a redirect's Location and tells a refused port
    from an open one; a job's owner must learn neither (the endpoint could point anywhere
    on the worker's loopback), so those failures are named by class only."""
    for cause in _chain(exc):
        if isinstance(cause, httpx.HTTPStatusError):
            status = cause.response.status_code
            if 300 <= status < 400:
                return f"redirect refused: the endpoint answered HTTP {status}"
            return f"the endpoint answered HTTP {status}"
        if isinstance(cause, (httpx.ConnectError, ConnectionRefusedError)):
            return "endpoint refused the connection"
        if isinstance(cause, (httpx.TimeoutException, TimeoutError)):
            return "the endpoint did not answer in time"
        if isinstance(cause, (httpx.TransportError, ConnectionError)):
            return "the connection to the endpoint failed"
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"[:2000]


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen:
        seen.append(current)
        # Only explicit causes (`raise ... from`): a time limit that fires while an HTTP error
        # is being handled is the time limit, not the HTTP error.
        current = current.__cause__
    return seen


def _driver(cancel: threading.Event) -> Callable[[Awaitable[Any]], bool]:
    """How a job drives its measurement (workers/loadgen/measure.py's `drive`): to the end,
    never interrupted; a cancelled job raises JobCancelled instead, and nothing is stored."""

    def drive(work: Awaitable[Any]) -> bool:
        asyncio.run(_until_cancelled(work, cancel))
        return False

    return drive


async def _until_cancelled[T](work: Awaitable[T], cancel: threading.Event) -> T:
    task = asyncio.ensure_future(work)
    while not task.done():
        if cancel.is_set():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            raise JobCancelled()
        await asyncio.wait({task}, timeout=0.25)
    return task.result()


def measure(
    spec: JobSpec, *, progress: Progress, cancel: threading.Event
) -> tuple[ResultDocument, Any]:
    """The job's document, and for a member of a fanned-out job its part (else None)."""
    if spec.kind == "load":
        return measure_load(spec, progress=progress, cancel=cancel)
    return measure_accuracy(spec, progress=progress, cancel=cancel), None


# The two call sites into the measuring packages. They mirror the CLIs (`workers/loadgen/modes.py`
# `run_mode`, `workers/accuracy/cli.py` `_run`) without the files and the terminal output.


def measure_load(
    spec: JobSpec, *, progress: Progress, cancel: threading.Event
) -> tuple[ResultDocument, Any]:
    """The job's load run through the CLI's own (workers/loadgen/measure.py): /metrics
    scraped, the prompt check recorded, and a run whose prompts miss their lengths refused.
    A job has no --allow-length-mismatch: such a run would be stored under a label it does
    not match, so the job fails."""
    from workers.loadgen import measure as load
    from workers.loadgen.client import EndpointConfig
    from workers.loadgen.prompts import CalibratedCounter, EndpointTokenizer, usage_probe
    from workers.loadgen.setup import load_setup

    if spec.scenario is None or spec.load is None:
        raise ValueError("a load job needs a scenario and load levels")
    scenario, endpoint = spec.scenario, spec.endpoint
    cfg = EndpointConfig(
        base_url=endpoint.url,
        model=endpoint.served_model,
        api=endpoint.api,
        api_key=endpoint.api_key.get_secret_value() if endpoint.api_key else None,
        timeout_s=endpoint.timeout_s,
    )
    progress.text = "calibrating prompts"
    counter = EndpointTokenizer.probe(cfg) or CalibratedCounter(usage_probe(cfg))
    # The CLI's own builder (workers/loadgen/setup.py): a job asks for what the CLI can.
    setup = load_setup(cfg, counter, scenario, spec.load)
    if spec.members > 1:
        return _measure_member(spec, setup, scenario, progress, cancel)

    def on_progress(state: Any) -> None:
        total = f"/{state.total}" if state.total else ""
        phase = " warm-up" if state.warmup else ""
        progress.text = f"{state.label}{phase}: {state.done}{total} requests, {state.errors} errors"

    def on_phase(text: str) -> None:
        progress.text = text

    measured = load.measure_load(
        setup, drive=_driver(cancel), progress=on_progress, on_phase=on_phase
    )
    return _measured_document(spec, measured, scenario), None


def _measured_document(spec: JobSpec, measured: Any, scenario: Scenario) -> ResultDocument:
    """The run's document, or the CLI's refusal of a run whose prompts missed their length."""
    from workers.loadgen import measure as load

    if measured.mismatched:
        raise load.LengthMismatch(
            f"{measured.mismatched}: the run does not match its scenario and was not stored"
        )
    return measured.document(model=spec.model, deployment=spec.deployment, scenario=scenario)


def _measure_member(
    spec: JobSpec, setup: Any, scenario: Scenario, progress: Progress, cancel: threading.Event
) -> tuple[ResultDocument, Any]:
    """One member's share, measured as a whole run is (workers/loadgen/measure.py), and the
    part it submits."""
    from workers.loadgen import measure as load
    from workers.loadgen.members import member_part

    if spec.start_at is None:
        raise ValueError("a member of a fanned-out job needs start_at")
    start_at_ns = int(spec.start_at.timestamp() * 1e9)
    progress.text = f"member {spec.member} of {spec.members}: measuring from start_at"

    measured, run = load.measure_member(
        setup,
        member=spec.member,
        members=spec.members,
        start_at_ns=start_at_ns,
        drive=_driver(cancel),
    )
    document = _measured_document(spec, measured, scenario)
    part = member_part(
        document, run, member=spec.member, members=spec.members, start_at_ns=start_at_ns
    )
    return part.document, part


def measure_accuracy(
    spec: JobSpec, *, progress: Progress, cancel: threading.Event
) -> ResultDocument:
    from workers.accuracy.protocols import get_protocol, prepare
    from workers.accuracy.runner import evaluate

    if not spec.protocol:
        raise ValueError("an accuracy job needs a protocol")
    prepared = prepare(get_protocol(spec.protocol), None, None, spec.limit)
    endpoint = spec.endpoint

    def on_progress(done: int, total: int, correct: int, failed: int) -> None:
        progress.text = f"{done}/{total} items, {correct} correct, {failed} failed"

    work = evaluate(
        prepared,
        endpoint=endpoint.url,
        model=spec.model,
        served_model=endpoint.served_model,
        deployment=spec.deployment,
        concurrency=spec.concurrency,
        api_key=endpoint.api_key.get_secret_value() if endpoint.api_key else None,
        timeout_s=endpoint.timeout_s,
        progress=on_progress,
    )
    return asyncio.run(_until_cancelled(work, cancel))
