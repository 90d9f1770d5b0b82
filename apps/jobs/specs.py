"""What a job asks of a worker: its options checked, and the versioned spec a worker runs,
with the endpoint's key handed out apart from it.
"""

import math
from typing import Any

from django.conf import settings
from pydantic import ValidationError

from apps.catalog.models import Scenario
from apps.catalog.presets import shape_of
from apps.errors import FieldRefused
from apps.jobs.crypto import decrypt, job_binding_secret
from apps.jobs.models import Job
from workers.loadgen.load_spec import LoadSpec
from workers.tasks import JobSpec


class JobError(FieldRefused):
    """A job that cannot be queued as asked; `field` names what is wrong (the API: 422)."""


class JobConflict(JobError):
    """What was asked conflicts with what exists: a job not in a retryable state, a name
    already taken (the API: 409)."""

    status = 409


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
    known = {"concurrency", "rates", "requests", "duration_s", "warmup", "seed", "limit", "members"}
    known |= set(LOAD_SETUP_OPTIONS)
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
    whole("members", 1, settings.JOB_MAX_MEMBERS)
    if kind == Job.Kind.ACCURACY and (options.get("members") or 1) > 1:
        raise JobError("members", "only a load job runs on several workers")
    duration = options.get("duration_s")
    if duration is not None and not (
        _number(duration) and 0 < duration <= settings.JOB_MAX_DURATION_S
    ):
        raise JobError("duration_s", f"seconds above 0, at most {settings.JOB_MAX_DURATION_S}")
    _load_setup_options_check(kind, options)


# What the CLI's load flags ask of a run beyond its levels (workers/loadgen/load_spec.py):
# a job asks for them by the same names, and a worker builds the run from them as the CLI
# does (workers/loadgen/setup.py).
LOAD_SETUP_OPTIONS = (
    "arrival",
    "burstiness",
    "max_concurrency",
    "prefix_groups",
    "early_stop",
    "processes",
    "client_cpu_limit",
    "client_lag_limit_ms",
)


def _load_setup_options_check(kind: str, options: dict[str, Any]) -> None:
    asked = [name for name in LOAD_SETUP_OPTIONS if options.get(name) is not None]
    if kind == Job.Kind.ACCURACY and asked:
        raise JobError(asked[0], "a load option; an accuracy job does not take it")
    arrival = options.get("arrival")
    if arrival is not None and arrival not in ("poisson", "gamma"):
        raise JobError("arrival", "poisson or gamma")
    early_stop = options.get("early_stop")
    if early_stop is not None and not isinstance(early_stop, bool):
        raise JobError("early_stop", "true or false")
    for name, low, high in (
        ("max_concurrency", 1, settings.JOB_MAX_CONCURRENCY),
        ("prefix_groups", 1, settings.JOB_MAX_PREFIX_GROUPS),
        ("processes", 1, settings.JOB_MAX_PROCESSES),
    ):
        value = options.get(name)
        if value is not None and not (_whole(value) and low <= value <= high):
            raise JobError(name, f"an integer from {low} to {high}")
    value = options.get("burstiness")
    if value is not None and not (_number(value) and 0 < value <= _MAX_BURSTINESS):
        raise JobError("burstiness", f"a number above 0, at most {_MAX_BURSTINESS:g}")
    for name, high in (
        ("client_cpu_limit", _MAX_CLIENT_CPU),
        ("client_lag_limit_ms", _MAX_CLIENT_LAG_MS),
    ):
        value = options.get(name)
        if value is not None and not (_number(value) and 0 <= value <= high):
            raise JobError(name, f"a number from 0 to {high:g}")
    if (options.get("processes") or 1) > 1 and (options.get("members") or 1) > 1:
        # A member runs its share in one process (workers/loadgen/members.py).
        raise JobError("processes", "a job on several workers runs one client process on each")


# Sanity bounds for numbers that cost a worker nothing to honour: a gamma shape (1 is
# Poisson), the share of a core and the event-loop lag past which a level is client-bound.
_MAX_BURSTINESS = 100.0
_MAX_CLIENT_CPU = 64.0
_MAX_CLIENT_LAG_MS = 60_000.0


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
    members = options.get("members") or 1
    if members > 1 and requests is None:
        # Members split a plan's requests; a duration has nothing to split.
        raise JobError("members", "several workers need a request count, not a duration")
    if members > 1 and requests is not None and requests < members:
        raise JobError("members", f"at most one member per request ({requests})")
    if (options.get("processes") or 1) > 1 and requests is None:
        raise JobError("processes", "several client processes need a request count, not a duration")
    load = {
        "concurrency": concurrency,
        "rates": rates or None,
        "requests": requests,
        "duration_s": duration,
        "warmup": options.get("warmup", scenario.warmup_requests),
        "seed": options.get("seed", 0),
        **{name: options[name] for name in LOAD_SETUP_OPTIONS if options.get(name) is not None},
    }
    try:
        # Unset options stay out of the message, so a worker older than them still reads
        # every job that does not ask for them.
        return LoadSpec.model_validate(load).model_dump(mode="json", exclude_unset=True)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        raise JobError(str(first["loc"][0]) if first["loc"] else "options", first["msg"]) from None


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
        **shape_of(scenario),
        "warmup_requests": load["warmup"],
        "duration_s": load["duration_s"],
        "request_count": load["requests"],
        "slo": slo,
    }


def heartbeat_interval_s() -> float:
    configured: float = settings.JOB_HEARTBEAT_INTERVAL_S
    return configured or max(1.0, settings.JOB_HEARTBEAT_TIMEOUT_S / 4)


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
        # Binds the result document to this attempt of this job (origin "scheduled", checked
        # at ingestion). Unlike the endpoint's key it opens nothing: it only vouches for one
        # attempt's document.
        "job_secret": job_binding_secret(job.idempotency_key, job.attempt),
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


def protocol_check(protocol: str) -> None:
    from workers.accuracy.protocols import get_protocol

    try:
        get_protocol(protocol)
    except (KeyError, ValueError) as exc:
        raise JobError("protocol", str(exc).strip("'\"") or "unknown protocol") from None
