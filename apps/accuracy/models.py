"""Accuracy results (a protocol's score and interval on a run) and their per-item outcomes."""

from django.db import models


class AccuracyResult(models.Model):
    run = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="accuracy_results")
    # The run's deployment, kept beside it (a run's deployment never changes once stored).
    # Pages ask "the latest score of these deployments": through the run, PostgreSQL read
    # every run of each deployment (hundreds in a long history) or walked the run table from
    # its first id to the newest run that has a score; by this column it reads the scores.
    deployment = models.ForeignKey(
        "catalog.Deployment", on_delete=models.CASCADE, related_name="+", editable=False
    )
    protocol = models.CharField(max_length=200)
    protocol_hash = models.CharField(max_length=100, blank=True)
    task = models.CharField(max_length=200)
    metric = models.CharField(max_length=200)
    n = models.PositiveIntegerField(null=True, blank=True, help_text="null: not stated")
    correct = models.FloatField(null=True, blank=True)
    score = models.FloatField()
    stderr = models.FloatField(null=True, blank=True)
    ci_low = models.FloatField(null=True, blank=True)
    ci_high = models.FloatField(null=True, blank=True)
    failures = models.JSONField(default=dict, blank=True)
    data_hash = models.CharField(max_length=100, blank=True)

    class Meta:
        ordering = ["run", "task", "metric"]

    def __str__(self) -> str:
        return f"{self.task} {self.metric} {self.score:.4f}"


class AccuracyItem(models.Model):
    result = models.ForeignKey(AccuracyResult, on_delete=models.CASCADE, related_name="items")
    item_id = models.CharField(max_length=200)
    correct = models.BooleanField(null=True, help_text="null: the item failed; see failure")
    extracted = models.CharField(max_length=500, blank=True)
    gold = models.CharField(max_length=500, blank=True)
    finish_reason = models.CharField(max_length=50, blank=True)
    output_tokens = models.PositiveIntegerField(null=True)
    failure = models.CharField(max_length=100, blank=True)
    response = models.TextField(blank=True)

    class Meta:
        ordering = ["result", "item_id"]
        constraints = [
            models.UniqueConstraint(fields=["result", "item_id"], name="unique_accuracy_item")
        ]

    def __str__(self) -> str:
        return f"{self.item_id}: {self.correct}"
