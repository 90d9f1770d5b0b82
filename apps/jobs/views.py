"""Pages: the endpoints list with "Run now", and a job status partial that polls while active.

Every page here belongs to an organization: apps.accounts.scoping decides who sees (viewer)
and who acts (member: run, cancel, retry). DEBUG changes nothing here.
"""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from apps.accounts.models import Role
from apps.accounts.ratelimit import RateLimited, org_write_limit
from apps.accounts.scoping import actor_of, current_org, orgs_of, require_role
from apps.catalog.selectors import deployments_visible, scenario_list
from apps.htmx import vary_on_htmx, wants_partial
from apps.jobs import broker, schedules, selectors, services, specs
from apps.jobs.allowlist import EndpointRefused
from apps.jobs.crypto import CredentialError
from apps.jobs.forms import EndpointForm, ScheduleForm
from apps.jobs.models import Endpoint, Job, Schedule


def _refused(request: HttpRequest, what: str) -> HttpResponse:
    if not request.user.is_authenticated:
        return HttpResponse(f"Sign in to {what}.", status=403)
    return HttpResponse(f"Your role in this organization does not allow you to {what}.", status=403)


def _acting(request: HttpRequest, org, what: str) -> HttpResponse | None:
    """None when the caller may act (member or above) in the org; the refusal otherwise."""
    try:
        require_role(org, request.user, Role.MEMBER)
    except PermissionDenied:
        return _refused(request, what)
    return None


def _own_endpoints(request: HttpRequest):
    return Endpoint.objects.filter(org__in=orgs_of(request.user))


def _endpoint_to_act_on(
    request: HttpRequest, endpoint_id: int, what: str
) -> Endpoint | HttpResponse:
    """One of the caller's endpoints, when it may act in the endpoint's org; the refusal
    otherwise (another organization's endpoint is a 404)."""
    if not request.user.is_authenticated:
        return _refused(request, what)
    endpoint = get_object_or_404(_own_endpoints(request), pk=endpoint_id)
    return _acting(request, endpoint.org, what) or endpoint


def _own_jobs(request: HttpRequest):
    return Job.objects.filter(endpoint__org__in=orgs_of(request.user))


def _job_partial(
    request: HttpRequest, job: Job | None, error: str = "", status: int = 200
) -> HttpResponse:
    return render(request, "jobs/job.html#job-status", {"job": job, "error": error}, status=status)


def _broker_down(request: HttpRequest, job: Job | None) -> HttpResponse:
    """503 with Retry-After, showing the job the broker did not take (stored failed, with a
    Retry button); base.html has htmx swap 503s in."""
    response = _job_partial(request, job, "The broker is unreachable; retry later.", status=503)
    response["Retry-After"] = str(settings.UNAVAILABLE_RETRY_AFTER_S)
    return response


@require_http_methods(["GET", "POST"])
@ensure_csrf_cookie  # static/js/csrf.js sends it with "Run now", "Cancel" and "Retry"
def endpoint_list(request: HttpRequest) -> HttpResponse:
    """The organization's endpoints; a member registers one with the form below them."""
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    org = current_org(request)
    deployments = deployments_visible(org=org).select_related("model", "accelerator", "engine")
    pools = selectors.pools_usable(org=org)
    form = EndpointForm(deployments=deployments, pools=pools)
    status = 200
    if request.method == "POST":
        if org is None:
            return _refused(request, "register endpoints")
        if refusal := _acting(request, org, "register endpoints"):
            return refusal
        form = EndpointForm(request.POST, deployments=deployments, pools=pools)
        if form.is_valid() and (created := _register(request, org, form)):
            messages.success(request, f"Endpoint “{created.name}” registered: Run now measures it.")
            return redirect("jobs:endpoint-list")
        status = 422
    endpoints = selectors.endpoints_with_latest_job(org=org)
    context = {
        "endpoints": endpoints,
        "org": org,
        "scenarios": scenario_list(org=org),
        "default_scenario": "single-stream",
        "form": form,
        "may_register": org is not None and _acting(request, org, "register endpoints") is None,
    }
    return render(request, "jobs/endpoint_list.html", context, status=status)


def _register(request: HttpRequest, org, form: EndpointForm) -> Endpoint | None:
    """The endpoint, or None with the refusal put on the form's field."""
    data = form.cleaned_data
    try:
        return services.endpoint_register(
            org=org,
            actor=actor_of(request),
            name=data["name"],
            url=data["url"],
            deployment=data.get("deployment"),
            facts=form.facts(),
            served_model=data.get("served_model") or "",
            api=data["api"],
            pool=data.get("pool") or "",
            api_key=data.get("api_key") or "",
            is_public=not data.get("private"),
        )
    except EndpointRefused as exc:
        form.add_error("url", str(exc))
    except specs.JobError as exc:
        field = exc.field if exc.field in form.fields else None
        form.add_error(field, exc.message)
    return None


@require_POST
def endpoint_run(request: HttpRequest, endpoint_id: int) -> HttpResponse:
    endpoint = _endpoint_to_act_on(request, endpoint_id, "run jobs")
    if isinstance(endpoint, HttpResponse):
        return endpoint
    try:
        org_write_limit(endpoint.org)
    except RateLimited as exc:
        response = HttpResponse(str(exc), status=429)
        response["Retry-After"] = str(exc.retry_after)
        return response
    scenario = scenario_list(org=endpoint.org).filter(slug=request.POST.get("scenario", "")).first()
    options = {}
    if endpoint.simulated:
        # The demo server answers at once; a short sweep lands in seconds.
        options = {"concurrency": [1, 4], "requests": 16}
    try:
        job = services.job_enqueue(
            endpoint=endpoint,
            scenario=scenario,
            options=options,
            requested_by=actor_of(request),
        )
    except (EndpointRefused, CredentialError) as exc:
        return _job_partial(request, None, str(exc))
    except specs.JobError as exc:
        return _job_partial(request, None, exc.message)
    except broker.BrokerUnavailable:
        return _broker_down(request, Job.objects.filter(endpoint=endpoint).first())
    return _job_partial(request, job)


@require_GET
@ensure_csrf_cookie
def job_detail(request: HttpRequest, job_id: int) -> HttpResponse:
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    job = get_object_or_404(
        _own_jobs(request).select_related("endpoint", "scenario", "run"), pk=job_id
    )
    if wants_partial(request):
        return vary_on_htmx(_job_partial(request, job))
    return vary_on_htmx(render(request, "jobs/job.html", {"job": job}))


def _job_to_act_on(request: HttpRequest, job_id: int, what: str) -> Job | HttpResponse:
    """One of the caller's jobs, when it may act in the job's org; the refusal otherwise."""
    if not request.user.is_authenticated:
        return _refused(request, what)
    job = get_object_or_404(_own_jobs(request).select_related("endpoint"), pk=job_id)
    return _acting(request, job.endpoint.org, what) or job


@require_POST
def job_cancel(request: HttpRequest, job_id: int) -> HttpResponse:
    job = _job_to_act_on(request, job_id, "cancel jobs")
    if isinstance(job, HttpResponse):
        return job
    job = services.job_cancel(job=job, actor=actor_of(request))
    return _job_partial(request, job)


@require_POST
def job_retry(request: HttpRequest, job_id: int) -> HttpResponse:
    job = _job_to_act_on(request, job_id, "retry jobs")
    if isinstance(job, HttpResponse):
        return job
    try:
        job = services.job_retry(job=job)
    except (specs.JobError, EndpointRefused, CredentialError) as exc:
        return _job_partial(request, job, str(exc))
    except broker.BrokerUnavailable:
        job.refresh_from_db()
        return _broker_down(request, job)
    return _job_partial(request, job)


@require_POST
def schedule_add(request: HttpRequest, endpoint_id: int) -> HttpResponse:
    """Add a load schedule to an endpoint from its row on /endpoints/."""
    endpoint = _endpoint_to_act_on(request, endpoint_id, "add schedules")
    if isinstance(endpoint, HttpResponse):
        return endpoint
    form = ScheduleForm(request.POST)
    scenario = None
    if form.is_valid():
        scenario = (
            scenario_list(org=endpoint.org).filter(slug=form.cleaned_data["scenario"]).first()
        )
    if not form.is_valid() or scenario is None:
        problems = "; ".join(
            f"{name}: {' '.join(errors)}" if name != "__all__" else " ".join(errors)
            for name, errors in form.errors.items()
        )
        messages.error(request, f"No schedule added: {problems or 'scenario: no such scenario'}")
        return redirect("jobs:endpoint-list")
    try:
        schedules.schedule_create(
            endpoint=endpoint,
            scenario=scenario,
            actor=actor_of(request),
            kind=Job.Kind.LOAD,
            cron=form.cleaned_data["cron"] or "",
            interval_minutes=form.cleaned_data["interval_minutes"],
        )
    except specs.JobError as exc:
        messages.error(request, f"No schedule added: {exc.field}: {exc.message}")
    else:
        messages.success(request, f"Schedule added to “{endpoint.name}”.")
    return redirect("jobs:endpoint-list")


@require_POST
def schedule_switch(request: HttpRequest, schedule_id: int) -> HttpResponse:
    """Turn a schedule off or on again, or remove it ("remove" in the form)."""
    if not request.user.is_authenticated:
        return _refused(request, "edit schedules")
    schedule = get_object_or_404(
        Schedule.objects.select_related("endpoint__org"),
        pk=schedule_id,
        endpoint__in=_own_endpoints(request),
    )
    if refusal := _acting(request, schedule.endpoint.org, "edit schedules"):
        return refusal
    if request.POST.get("remove"):
        schedules.schedule_delete(schedule=schedule, actor=actor_of(request))
        messages.success(request, "Schedule removed.")
    else:
        try:
            schedules.schedule_edit(schedule=schedule, changes={"enabled": not schedule.enabled})
        except specs.JobError as exc:
            messages.error(request, f"Schedule unchanged: {exc.field}: {exc.message}")
    return redirect("jobs:endpoint-list")
