"""Reads behind the endpoints page and the endpoints API."""

from __future__ import annotations

from django.db.models import OuterRef, Q, QuerySet, Subquery

from apps.accounts.models import Organization
from apps.jobs.models import Endpoint, Job, Pool
from apps.jobs.specs import JobError
from workers.celery import pool_queue


def endpoints_of(*, org: Organization | None) -> QuerySet[Endpoint]:
    """The organization's endpoints with their deployment's facts (none without an org)."""
    return Endpoint.objects.filter(org=org).select_related(
        "deployment__model", "deployment__accelerator", "deployment__engine"
    )


def endpoints_with_latest_job(*, org: Organization | None) -> list[Endpoint]:
    """The endpoints page's rows: each endpoint with its schedules and `latest_job` (or None),
    in a fixed number of queries however many endpoints there are (one query per endpoint
    before)."""
    newest = Job.objects.filter(endpoint=OuterRef("pk")).order_by("-created_at", "-id")
    endpoints = list(
        endpoints_of(org=org)
        .annotate(latest_job_id=Subquery(newest.values("id")[:1]))
        .prefetch_related("schedules__scenario")
    )
    jobs = Job.objects.select_related("scenario").in_bulk(
        [e.latest_job_id for e in endpoints if e.latest_job_id]
    )
    for endpoint in endpoints:
        endpoint.latest_job = jobs.get(endpoint.latest_job_id)
    return endpoints


def pools_usable(*, org: Organization | None) -> list[Pool]:
    """The pools an endpoint of `org` may name: its own, then the service's (first-party)."""
    mine = Q(org=org) if org is not None else Q(pk__in=[])
    return sorted(
        Pool.objects.filter(mine | Q(org__isnull=True)),
        key=lambda pool: (pool.org_id is None, pool.name),
    )


def pool_default(*, org: Organization, sku: str) -> str:
    """The pool an endpoint registered without one goes to: its accelerator's
    (pool.<accelerator>) where the organization or the service has it, else the only pool
    there is. Several and none of them the accelerator's: JobError naming them, since
    guessing would queue a job on hardware nobody chose."""
    wanted = pool_queue(sku)
    usable = [p.name for p in pools_usable(org=org)]
    if wanted in usable:
        return wanted
    if len(usable) == 1:
        return usable[0]
    choices = ", ".join(usable) or "none yet: add one with POST /api/v1/pools"
    raise JobError("pool", f"no pool {wanted!r}: choose one of your pools ({choices})")
