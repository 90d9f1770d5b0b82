"""The jobs app: endpoints, pools, jobs and schedules."""

from django.apps import AppConfig


class JobsConfig(AppConfig):
    name = "apps.jobs"
    label = "jobs"
    verbose_name = "Jobs, endpoints and schedules"

    def ready(self) -> None:
        from apps.jobs.origin import job_document_host
        from apps.runs.signals import job_claimed

        job_claimed.connect(job_document_host, dispatch_uid="jobs-document-host")
