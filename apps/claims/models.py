"""The claims ledger: published claims with their source, date, workload, figures and price
basis; where each stands now; every flip; and who is told of one.

A claim's verdicts are not stored: they are computed from its figures and the dated price
sets (apps/claims/verdicts.py) and from the stored runs (the one answer), when read. What is
stored is its last standing, so the next evaluation can see a flip, and the flips themselves.
"""

from django.db import models

from apps.costs.claims import Comparison
from apps.regressions.models import Recipient


class PublishedClaim(models.Model):
    class Kind(models.TextChoices):
        COST = "cost"
        THROUGHPUT = "throughput"

    slug = models.SlugField(max_length=100, unique=True)
    title = models.CharField(max_length=300)
    statement = models.TextField(help_text="the claim in its source's words")
    published_on = models.DateField()
    # {"title", "url", "repo", "path", "commit", "cited_in"}: where it was read.
    source = models.JSONField(default=dict)
    kind = models.CharField(max_length=20, choices=Kind.choices)
    side_a = models.CharField(max_length=50)
    side_b = models.CharField(max_length=50)
    # {"model", "scenario", "lengths", "precision", "spec", "engine", "serving",
    #  "interactivity_min", "token_basis"}: the question the stored runs are asked.
    workload = models.JSONField(default=dict)
    figures = models.JSONField(default=dict, help_text="as published")
    # {"price_set", "tier", "stated", "usd_per_gpu_hour", "note"}: the prices it used.
    basis = models.JSONField(default=dict)
    throughput_ratio = models.FloatField(help_text="A's tok/s/GPU over B's, from the figures")
    claimed_ratio = models.FloatField(help_text="A's $/Mtok (or tok/s) over B's, as claimed")
    comparison = models.CharField(
        max_length=2, choices=[(c.value, c.value) for c in Comparison], default="<"
    )
    derivation = models.TextField(blank=True)
    notes = models.TextField(blank=True)
    order = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["order", "slug"]

    def __str__(self) -> str:
        return self.slug


class ClaimStanding(models.Model):
    """Where a claim stood at its last evaluation: its own figures under the newest price
    set, and the stored runs' answer (None: no stored run bears on it)."""

    claim = models.OneToOneField(PublishedClaim, on_delete=models.CASCADE, related_name="standing")
    price_set = models.CharField(max_length=100)
    holds_on_figures = models.BooleanField(null=True)
    holds_on_runs = models.BooleanField(null=True)
    runs_ratio = models.FloatField(null=True, blank=True)
    runs = models.JSONField(default=list, blank=True, help_text="[run of A, run of B]")
    evaluated_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.claim_id} under {self.price_set}"


class ClaimFlip(models.Model):
    """A claim's verdict changed: under a new price set, or on the stored runs."""

    class Cause(models.TextChoices):
        PRICE_SET = "price set"
        RUNS = "runs"

    claim = models.ForeignKey(PublishedClaim, on_delete=models.CASCADE, related_name="flips")
    at = models.DateTimeField()
    cause = models.CharField(max_length=20, choices=Cause.choices)
    price_set = models.CharField(max_length=100)
    # {"holds_on_figures", "holds_on_runs", "price_set", "runs_ratio", "runs"} before and after.
    before = models.JSONField(default=dict)
    after = models.JSONField(default=dict)
    summary = models.TextField()

    class Meta:
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        return f"{self.claim_id} flipped at {self.at:%Y-%m-%d}"


class ClaimSubscription(Recipient):
    """An organization told when a claim flips (any claim, or one): by webhook, Slack or
    email, delivered as regression alerts are (apps/regressions/services.send)."""

    org = models.ForeignKey(
        "accounts.Organization", on_delete=models.CASCADE, related_name="claim_subscriptions"
    )
    claim = models.ForeignKey(PublishedClaim, null=True, blank=True, on_delete=models.CASCADE)


class ClaimAlert(models.Model):
    """One flip for one subscription: sent once, retried with backoff until then."""

    class Status(models.TextChoices):
        PENDING = "pending"
        SENT = "sent"
        FAILED = "failed"

    subscription = models.ForeignKey(
        ClaimSubscription, on_delete=models.CASCADE, related_name="alerts"
    )
    flip = models.ForeignKey(ClaimFlip, on_delete=models.CASCADE, related_name="alerts")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    next_attempt_at = models.DateTimeField(db_index=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.CharField(max_length=1000, blank=True)

    class Meta:
        ordering = ["-next_attempt_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["subscription", "flip"], name="unique_claim_alert")
        ]

    def __str__(self) -> str:
        return f"claim alert {self.flip_id}: {self.status}"
