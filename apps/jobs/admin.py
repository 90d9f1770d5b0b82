"""The admin's pages for endpoints (keys never shown), pools, jobs and schedules; a schedule saved
here is checked as the API checks it."""

from django import forms
from django.contrib import admin

from apps.jobs.models import Endpoint, Job, Pool, Schedule


@admin.register(Endpoint)
class EndpointAdmin(admin.ModelAdmin):
    # The encrypted key is not editable and never shown; set it through the API.
    list_display = ["name", "org", "pool", "deployment", "simulated", "created_at"]
    list_filter = ["pool", "simulated"]
    exclude = ["api_key_encrypted"]
    readonly_fields = ["has_api_key"]


@admin.register(Pool)
class PoolAdmin(admin.ModelAdmin):
    # No organization: a first-party pool (the service's Celery workers); else an agent pool.
    list_display = ["name", "org", "created_at"]
    list_filter = [("org", admin.EmptyFieldListFilter)]


class ScheduleForm(forms.ModelForm):
    class Meta:
        model = Schedule
        fields = [
            "endpoint",
            "kind",
            "scenario",
            "protocol",
            "options",
            "cron",
            "interval_minutes",
            "enabled",
        ]

    def clean(self) -> dict:
        from apps.jobs.schedules import schedule_validate
        from apps.jobs.specs import JobError

        data = super().clean()
        names = {field.name for field in Schedule._meta.concrete_fields}
        candidate = Schedule(**{k: v for k, v in data.items() if k in names})
        try:
            schedule_validate(candidate)
        except JobError as exc:
            raise forms.ValidationError({exc.field: exc.message}) from None
        return data


@admin.register(Schedule)
class ScheduleAdmin(admin.ModelAdmin):
    form = ScheduleForm
    list_display = [
        "endpoint",
        "kind",
        "scenario",
        "protocol",
        "cron",
        "interval_minutes",
        "enabled",
        "next_run_at",
        "last_run_at",
    ]
    list_filter = ["enabled", "kind"]
    readonly_fields = ["next_run_at", "last_run_at"]

    def save_model(self, request, obj, form, change) -> None:
        from apps.jobs.schedules import schedule_save

        schedule_save(schedule=obj)


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "endpoint",
        "kind",
        "scenario",
        "status",
        "attempt",
        "pool",
        "run",
        "created_at",
        "heartbeat_at",
    ]
    list_filter = ["status", "kind", "pool"]
    readonly_fields = [f.name for f in Job._meta.fields]
