"""The jobs app: endpoints, pools, jobs and schedules."""

from django.apps import AppConfig


class JobsConfig(AppConfig):
    name = "apps.jobs"
    label = "jobs"
    verbose_name = "Jobs, endpoints and schedules"
