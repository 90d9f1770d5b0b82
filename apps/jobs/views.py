"""Pages: the endpoints list with "Run now", and a job status partial that polls while active.

Acting on endpoints (run, cancel, retry) needs a staff user, or DEBUG on (the local demo).
"""

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_GET, require_POST

from apps.catalog.models import Scenario
from apps.jobs import services
from apps.jobs.allowlist import EndpointRefused
from apps.jobs.crypto import CredentialError
from apps.jobs.models import Endpoint, Job


def _may_operate(request: HttpRequest) -> bool:
    return settings.DEBUG or (request.user.is_authenticated and request.user.is_staff)


def _job_partial(request: HttpRequest, job: Job | None, error: str = "") -> HttpResponse:
    return render(request, "jobs/job.html#job-status", {"job": job, "error": error})


@require_GET
@ensure_csrf_cookie  # static/js/csrf.js sends it with "Run now", "Cancel" and "Retry"
def endpoint_list(request: HttpRequest) -> HttpResponse:
    if not _may_operate(request):
        return redirect_to_login(request.get_full_path())
    endpoints = list(
        Endpoint.objects.select_related(
            "deployment__model", "deployment__accelerator", "deployment__engine"
        ).prefetch_related("schedules__scenario")
    )
    for endpoint in endpoints:
        endpoint.latest_job = endpoint.jobs.select_related("scenario").first()
    context = {
        "endpoints": endpoints,
        "scenarios": Scenario.objects.all(),
        "default_scenario": "single-stream",
    }
    return render(request, "jobs/endpoint_list.html", context)


@require_POST
def endpoint_run(request: HttpRequest, endpoint_id: int) -> HttpResponse:
    if not _may_operate(request):
        return HttpResponse("Sign in as staff to run jobs.", status=403)
    endpoint = get_object_or_404(Endpoint, pk=endpoint_id)
    scenario = Scenario.objects.filter(slug=request.POST.get("scenario", "")).first()
    options = {}
    if endpoint.simulated:
        # The demo server answers at once; a short sweep lands in seconds.
        options = {"concurrency": [1, 4], "requests": 16}
    try:
        job = services.job_enqueue(
            endpoint=endpoint,
            scenario=scenario,
            options=options,
            requested_by=f"page {request.user.get_username() or 'anonymous'}",
        )
    except (EndpointRefused, CredentialError) as exc:
        return _job_partial(request, None, str(exc))
    except services.JobError as exc:
        return _job_partial(request, None, exc.message)
    except services.BrokerUnavailable:
        job = Job.objects.filter(endpoint=endpoint).first()
    return _job_partial(request, job)


@require_GET
@ensure_csrf_cookie
def job_detail(request: HttpRequest, job_id: int) -> HttpResponse:
    if not _may_operate(request):
        return redirect_to_login(request.get_full_path())
    job = get_object_or_404(Job.objects.select_related("endpoint", "scenario", "run"), pk=job_id)
    if request.htmx:
        return _job_partial(request, job)
    return render(request, "jobs/job.html", {"job": job})


@require_POST
def job_cancel(request: HttpRequest, job_id: int) -> HttpResponse:
    if not _may_operate(request):
        return HttpResponse("Sign in as staff to cancel jobs.", status=403)
    job = services.job_cancel(job=get_object_or_404(Job, pk=job_id))
    return _job_partial(request, job)


@require_POST
def job_retry(request: HttpRequest, job_id: int) -> HttpResponse:
    if not _may_operate(request):
        return HttpResponse("Sign in as staff to retry jobs.", status=403)
    job = get_object_or_404(Job, pk=job_id)
    try:
        job = services.job_retry(job=job)
    except (services.JobError, EndpointRefused, CredentialError) as exc:
        return _job_partial(request, job, str(exc))
    except services.BrokerUnavailable:
        job.refresh_from_db()
    return _job_partial(request, job)
