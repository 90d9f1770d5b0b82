"""Change points found in the history, who subscribed to hear of them, and what was sent.

A series is one configuration (a deployment less its engine version, image and flags: those
are what a change point names as changed) in one scenario, at one load level, for one
metric. Detection (apps/regressions/services.py) keeps these rows in step with the runs.
"""

from django.conf import settings
from django.db import models

from workers import figures

# (key, label, higher is better, log scale), as the registry (workers/figures.py) has them.
METRICS = tuple(
    (f.key, f.titled, f.higher, f.log) for f in (figures.FIGURES[k] for k in figures.WATCHED)
)
METRIC_LABELS = {key: label for key, label, _, _ in METRICS}


# What makes a change point the same one on the next detection pass (its unique constraint).
CHANGE_POINT_KEY = ["org", "config_key", "scenario", "level", "metric", "after_run"]


class ChangePoint(models.Model):
    class Direction(models.TextChoices):
        REGRESSION = "regression"
        IMPROVEMENT = "improvement"

    # Who may see it: null, everyone (found over public runs only); else that organization
    # (found over public runs and its own private ones).
    org = models.ForeignKey(
        "accounts.Organization", null=True, blank=True, on_delete=models.CASCADE
    )
    config_key = models.CharField(max_length=64, db_index=True)
    scenario = models.ForeignKey("catalog.Scenario", on_delete=models.CASCADE)
    level = models.CharField(max_length=50, help_text="load level: c16, r2.5 or a label")
    metric = models.CharField(max_length=30, choices=[(m[0], m[1]) for m in METRICS])
    # The deployment of the first run after the change (filters read it).
    deployment = models.ForeignKey("catalog.Deployment", on_delete=models.CASCADE)
    direction = models.CharField(max_length=20, choices=Direction.choices)
    before_run = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="+")
    after_run = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="+")
    before_runs = models.JSONField(default=list, help_text="run ids of the segment before")
    after_runs = models.JSONField(default=list, help_text="run ids of the segment after")
    last_before_at = models.DateTimeField()
    first_after_at = models.DateTimeField()
    before_value = models.FloatField()
    after_value = models.FloatField()
    relative = models.FloatField(help_text="after/before - 1 (a fraction's difference)")
    relative_low = models.FloatField()
    relative_high = models.FloatField()
    p_value = models.FloatField()
    noise = models.FloatField()
    # What differs between the runs either side (fairness.differences + image and flags).
    differences = models.JSONField(default=list, blank=True)
    # The series' values after the change as last seen, for the persistence rule.
    series_tail = models.JSONField(default=list, blank=True)
    current = models.BooleanField(default=True, help_text="still found on the latest data")
    found_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-first_after_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=CHANGE_POINT_KEY, nulls_distinct=False, name="unique_change_point"
            )
        ]

    def __str__(self) -> str:
        return f"{self.direction} {self.metric} {self.relative:+.1%} at run {self.after_run_id}"

    @property
    def metric_label(self) -> str:
        return METRIC_LABELS.get(self.metric, self.metric)

    @property
    def change_text(self) -> str:
        """'-23.7% [-24.6%, -22.8%]' (points of a fraction for a success rate)."""
        if self.metric == "success_rate":
            unit = 100
            return (
                f"{unit * self.relative:+.1f} points [{unit * self.relative_low:+.1f}, "
                f"{unit * self.relative_high:+.1f}]"
            )
        return f"{self.relative:+.1%} [{self.relative_low:+.1%}, {self.relative_high:+.1%}]"


class Acknowledgement(models.Model):
    """An organization has seen a change point: no more alerts of it go out to it."""

    change_point = models.ForeignKey(
        ChangePoint, on_delete=models.CASCADE, related_name="acknowledgements"
    )
    org = models.ForeignKey("accounts.Organization", on_delete=models.CASCADE)
    by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["change_point", "org"], name="unique_acknowledgement")
        ]

    def __str__(self) -> str:
        return f"change point {self.change_point_id} acknowledged by {self.org_id}"


class Recipient(models.Model):
    """Where an organization's alerts go (a webhook, Slack or email) and whether they do:
    what every subscription shares, regression alerts' and the claims ledger's
    (apps/claims), all delivered by services.send."""

    class Channel(models.TextChoices):
        WEBHOOK = "webhook"  # JSON, signed with HMAC-SHA256
        SLACK = "slack"  # a Slack-compatible incoming webhook: {"text": ...}
        EMAIL = "email"

    name = models.CharField(max_length=200, blank=True)
    channel = models.CharField(max_length=10, choices=Channel.choices)
    target = models.CharField(max_length=2000, help_text="URL, or email address(es)")
    secret = models.CharField(max_length=200, blank=True, help_text="webhook signing key")
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        abstract = True
        ordering = ["org", "id"]

    def __str__(self) -> str:
        return f"{self.org} {self.channel} → {self.target}"

    @property
    def addresses(self) -> list[str]:
        """An email subscription's addresses, as its target lists them."""
        return [a.strip() for a in self.target.split(",") if a.strip()]


class Subscription(Recipient):
    org = models.ForeignKey(
        "accounts.Organization", on_delete=models.CASCADE, related_name="regression_subscriptions"
    )
    # Empty: any. Matched case-insensitively against the change point's deployment.
    model_name = models.CharField(max_length=200, blank=True)
    accelerator = models.CharField(max_length=50, blank=True)
    deployment = models.ForeignKey(
        "catalog.Deployment", null=True, blank=True, on_delete=models.CASCADE
    )
    scenario = models.ForeignKey(
        "catalog.Scenario", null=True, blank=True, on_delete=models.CASCADE
    )
    regressions = models.BooleanField(default=True)
    improvements = models.BooleanField(default=False)
    # The persistence rule: at least `persist_needed` of the last `persist_window` points.
    persist_needed = models.PositiveSmallIntegerField(default=2)
    persist_window = models.PositiveSmallIntegerField(default=3)


class Alert(models.Model):
    """One change point for one subscription: sent once, retried with backoff until then."""

    class Status(models.TextChoices):
        PENDING = "pending"
        SENT = "sent"
        FAILED = "failed"  # gave up after the last attempt
        ACKNOWLEDGED = "acknowledged"  # acknowledged before it could be sent

    subscription = models.ForeignKey(Subscription, on_delete=models.CASCADE, related_name="alerts")
    change_point = models.ForeignKey(ChangePoint, on_delete=models.CASCADE, related_name="alerts")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    next_attempt_at = models.DateTimeField(db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["subscription", "change_point"], name="unique_alert")
        ]

    def __str__(self) -> str:
        return f"alert of change point {self.change_point_id}: {self.status}"


class Delivery(models.Model):
    """The delivery log: one attempt to send an alert, and what came back."""

    alert = models.ForeignKey(Alert, on_delete=models.CASCADE, related_name="deliveries")
    attempt = models.PositiveSmallIntegerField()
    at = models.DateTimeField(auto_now_add=True)
    ok = models.BooleanField()
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.CharField(max_length=1000, blank=True)

    class Meta:
        ordering = ["alert", "attempt"]

    def __str__(self) -> str:
        return f"alert {self.alert_id} try {self.attempt}: {'ok' if self.ok else 'failed'}"


class Detection(models.Model):
    """One pass of detection over every series: when, and what it found."""

    at = models.DateTimeField(db_index=True)
    series = models.PositiveIntegerField()
    change_points = models.PositiveIntegerField()
    new = models.PositiveIntegerField()
    alerts = models.PositiveIntegerField()

    class Meta:
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        return f"detection at {self.at}: {self.change_points} change point(s)"
