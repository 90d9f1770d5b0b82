"""Endpoints (a URL serving a deployment), pools (queues), jobs with their fanned-out parts, and
schedules."""

import uuid

from django.db import models


class Endpoint(models.Model):
    """A live URL serving a deployment, measured by the workers of one pool."""

    class Api(models.TextChoices):
        COMPLETIONS = "completions"
        CHAT = "chat"

    org = models.ForeignKey(
        "accounts.Organization", on_delete=models.CASCADE, related_name="endpoints"
    )
    deployment = models.ForeignKey(
        "catalog.Deployment", on_delete=models.PROTECT, related_name="endpoints"
    )
    # The model and deployment facts as workers put them in result documents, so every run
    # of this endpoint lands on the same deployment fingerprint.
    facts = models.JSONField(default=dict)
    name = models.CharField(max_length=200)
    url = models.CharField(max_length=2000)
    served_model = models.CharField(max_length=200, help_text="model name sent in requests")
    api = models.CharField(max_length=20, choices=Api.choices, default=Api.COMPLETIONS)
    pool = models.CharField(max_length=100, help_text="queue, e.g. pool.mi355x")
    # Fernet ciphertext (apps.jobs.crypto); the plaintext is never shown after entry.
    api_key_encrypted = models.TextField(blank=True, editable=False)
    # Test servers and demos: their runs are labelled `simulated`, never `measured`.
    simulated = models.BooleanField(default=False)
    is_public = models.BooleanField(default=True, help_text="runs are public")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "id"]
        constraints = [models.UniqueConstraint(fields=["org", "name"], name="unique_endpoint_name")]

    def __str__(self) -> str:
        return self.name

    @property
    def has_api_key(self) -> bool:
        return bool(self.api_key_encrypted)


class Job(models.Model):
    """One request to measure an endpoint: queued -> running -> succeeded | failed | cancelled."""

    class Kind(models.TextChoices):
        LOAD = "load"
        ACCURACY = "accuracy"

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"
        CANCELLED = "cancelled"

    ACTIVE = (Status.QUEUED, Status.RUNNING)
    FINISHED = (Status.SUCCEEDED, Status.FAILED, Status.CANCELLED)

    endpoint = models.ForeignKey(Endpoint, on_delete=models.CASCADE, related_name="jobs")
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.LOAD)
    scenario = models.ForeignKey(
        "catalog.Scenario", null=True, blank=True, on_delete=models.PROTECT, related_name="jobs"
    )
    protocol = models.CharField(max_length=100, blank=True)
    # Load levels, request counts, accuracy item limit: what the scenario leaves open.
    options = models.JSONField(default=dict, blank=True)
    schedule = models.ForeignKey(
        "Schedule", null=True, blank=True, on_delete=models.SET_NULL, related_name="jobs"
    )
    status = models.CharField(
        max_length=20, choices=Status.choices, default=Status.QUEUED, db_index=True
    )
    error = models.TextField(blank=True)
    progress = models.CharField(max_length=500, blank=True)
    # The result document carries this key: a redelivered or retried job never stores twice.
    idempotency_key = models.CharField(max_length=100, unique=True)
    attempt = models.PositiveIntegerField(default=1)
    pool = models.CharField(max_length=100)
    worker = models.CharField(max_length=300, blank=True)
    run = models.ForeignKey(
        "runs.Run", null=True, blank=True, on_delete=models.SET_NULL, related_name="jobs"
    )
    requested_by = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["status", "heartbeat_at"])]

    def __str__(self) -> str:
        return f"job {self.pk} ({self.status})"

    @staticmethod
    def new_key() -> str:
        return f"job:{uuid.uuid4()}"

    @property
    def task_id(self) -> str:
        return f"{self.idempotency_key}:{self.attempt}"

    @property
    def is_active(self) -> bool:
        return self.status in self.ACTIVE


class JobPart(models.Model):
    """One member's share of a load job fanned out over several workers (options `members`),
    held until every member's is in; the merged run is stored then, and the parts deleted."""

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="parts")
    attempt = models.PositiveIntegerField()
    member = models.PositiveIntegerField()
    worker = models.CharField(max_length=300)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # workers.loadgen.members.MemberPart as JSON; null until the member submits it.
    part = models.JSONField(null=True, blank=True)
    received_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["job", "attempt", "member"]
        constraints = [
            models.UniqueConstraint(
                fields=["job", "attempt", "member"], name="unique_job_part_member"
            )
        ]

    def __str__(self) -> str:
        return f"job {self.job_id} member {self.member}"


class Schedule(models.Model):
    """Measure an endpoint regularly: a cron expression (UTC) or a fixed interval."""

    endpoint = models.ForeignKey(Endpoint, on_delete=models.CASCADE, related_name="schedules")
    kind = models.CharField(max_length=20, choices=Job.Kind.choices, default=Job.Kind.LOAD)
    scenario = models.ForeignKey(
        "catalog.Scenario", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    protocol = models.CharField(max_length=100, blank=True)
    options = models.JSONField(default=dict, blank=True)
    cron = models.CharField(max_length=100, blank=True, help_text="e.g. '0 2 * * *' (UTC)")
    interval_minutes = models.PositiveIntegerField(null=True, blank=True)
    enabled = models.BooleanField(default=True)
    next_run_at = models.DateTimeField(null=True, blank=True, db_index=True)
    last_run_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["endpoint", "id"]
        constraints = [
            models.CheckConstraint(
                condition=(
                    models.Q(interval_minutes__isnull=True) & ~models.Q(cron="")
                    | models.Q(interval_minutes__isnull=False) & models.Q(cron="")
                ),
                name="schedule_cron_xor_interval",
            )
        ]

    def __str__(self) -> str:
        when = self.cron or f"every {self.interval_minutes} min"
        what = self.scenario.slug if self.scenario_id else self.protocol
        return f"{self.endpoint} · {what} · {when}"


class Pool(models.Model):
    """A named queue of workers. Without an organization it is first-party (the service's own
    fleet, on Celery); with one, only that organization's endpoints may queue jobs on it, and
    its hosts take jobs through the agent API with that organization's token."""

    name = models.CharField(max_length=100, help_text="e.g. pool.acme-h100")
    org = models.ForeignKey(
        "accounts.Organization",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="pools",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        # One owner per organization pool name (not merely one per organization): two
        # tenants' agents never share a name. First-party names are unique among themselves
        # (NULLs are distinct in a plain unique constraint); services.pool_create keeps
        # organizations off them.
        constraints = [
            models.UniqueConstraint(
                fields=["name"],
                condition=models.Q(org__isnull=False),
                name="unique_org_pool_name",
            ),
            models.UniqueConstraint(
                fields=["name"],
                condition=models.Q(org__isnull=True),
                name="unique_first_party_pool_name",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_agent(self) -> bool:
        return self.org_id is not None
