"""Reviews: a run proposed for the official board and the staff's decision on it."""

from django.db import models


class Review(models.Model):
    """A run proposed for the official board, and the site staff's decision on it."""

    class Status(models.TextChoices):
        PROPOSED = "proposed"
        APPROVED = "approved"
        REJECTED = "rejected"

    run = models.OneToOneField("runs.Run", on_delete=models.CASCADE, related_name="review")
    status = models.CharField(
        max_length=20, choices=Status.choices, default=Status.PROPOSED, db_index=True
    )
    # Shown to the submitter on the run's page.
    reason = models.TextField(blank=True)
    proposed_by = models.CharField(max_length=300, blank=True)
    proposed_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.CharField(max_length=300, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-proposed_at", "-id"]
        # Site staff, not an organization role: granted in the admin to users or groups.
        permissions = [("review_runs", "Can approve or reject runs for the official board")]

    def __str__(self) -> str:
        return f"review of run {self.run_id} ({self.status})"
