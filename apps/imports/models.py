"""What the InferenceX sync did, each time it ran: the sync's own record, kept when it fails."""

from django.db import models


class SyncRun(models.Model):
    class Status(models.TextChoices):
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"

    source = models.CharField(max_length=2000, help_text="URL or folder read")
    trigger = models.CharField(max_length=50, default="scheduler")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.RUNNING)
    started_at = models.DateTimeField(auto_now_add=True, db_index=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    rows_read = models.PositiveIntegerField(default=0)
    rows_new = models.PositiveIntegerField(default=0)
    runs_created = models.PositiveIntegerField(default=0)
    accuracy_runs_created = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-started_at", "-id"]

    def __str__(self) -> str:
        return f"InferenceX sync {self.pk} of {self.source}: {self.status}"
