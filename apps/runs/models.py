"""Runs, their points (one per load level) and request records, archived records, and the run tally
per deployment and scenario."""

from django.db import models
from django.db.models import F
from django.db.models.functions import Coalesce

from workers import figures

# How the board dates a run: measured where its document says, else when it landed (an
# imported history lands all at once, measured over months).
MEASURED_AT = Coalesce("started_at", "created_at")


class Run(models.Model):
    """One execution of a scenario (or accuracy protocol) on a deployment."""

    class Provenance(models.TextChoices):
        MEASURED = "measured"
        IMPORTED = "imported"
        PUBLISHED = "published"
        SIMULATED = "simulated"

    class Origin(models.TextChoices):
        """Who measured it, as the service checked (DESIGN.md, "Origin"); beside provenance."""

        SCHEDULED = "scheduled"  # a job this service queued; its document bound to the job
        SUBMITTED = "submitted"  # posted with a token: self-reported
        IMPORTED = "imported"  # a peer tool's file or a synced source
        PUBLISHED = "published"  # a cited figure

    class OriginHost(models.TextChoices):
        FIRST_PARTY = "first_party"  # the service's own fleet (a pool without organization)
        ORG_HOST = "org_host"  # an organization's own host, through the agent

    class Status(models.TextChoices):
        SUCCEEDED = "succeeded"
        FAILED = "failed"
        PARTIAL = "partial"

    idempotency_key = models.CharField(max_length=100, unique=True)
    deployment = models.ForeignKey(
        "catalog.Deployment", on_delete=models.PROTECT, related_name="runs"
    )
    scenario = models.ForeignKey(
        "catalog.Scenario", null=True, blank=True, on_delete=models.PROTECT, related_name="runs"
    )
    org = models.ForeignKey(
        "accounts.Organization",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="runs",
    )
    is_public = models.BooleanField(default=True)
    # Who last published or unpublished the run, and when (the audit trail keeps every change).
    visibility_changed_by = models.CharField(max_length=300, blank=True)
    visibility_changed_at = models.DateTimeField(null=True, blank=True)
    provenance = models.CharField(max_length=20, choices=Provenance.choices)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.SUCCEEDED)
    origin = models.CharField(
        max_length=20, choices=Origin.choices, default=Origin.SUBMITTED, db_index=True
    )
    # Only for scheduled runs: which kind of host ran the job (blank otherwise).
    origin_host = models.CharField(max_length=20, choices=OriginHost.choices, blank=True)
    # The public board's rules (apps/trust/rules.py), checked when the run lands and again
    # when what they read changes (an accuracy result on the deployment, say): the names and
    # reasons of those it fails. Only runs that pass rank on the default board.
    rules_passed = models.BooleanField(default=False, db_index=True)
    rules_failed = models.JSONField(default=list, blank=True)
    # The row audit's reasons (workers/audit.py): the document contradicts itself or a
    # physical bound. Only an imported or published run is stored with any (flagged: shown,
    # never ranked nor priced by default through the board's rule "audit_passed"); a measured
    # or submitted one that fails is refused. Each: {"code", "paths", "message"}.
    audit_reasons = models.JSONField(default=list, blank=True)
    # Whether audit_reasons has any: a column every default view filters on (apps/runs/sweeps.py).
    audit_flagged = models.BooleanField(default=False, db_index=True)
    source_tool = models.CharField(max_length=100, blank=True)
    source_citation = models.TextField(blank=True)
    source_url = models.CharField(max_length=2000, blank=True)
    file_sha256 = models.CharField(max_length=64, blank=True)
    file_name = models.CharField(max_length=500, blank=True)
    environment = models.JSONField(default=dict, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    submitted_by = models.ForeignKey(
        "accounts.ApiToken", null=True, blank=True, on_delete=models.SET_NULL
    )
    # The document as submitted, minus per-request records (those live in RequestRecord).
    document = models.JSONField(default=dict)
    # Free labels from the document (branch, commit, pr, "unofficial" ...), a column of their
    # own so that the board and the API can select on them without reading the document.
    labels = models.JSONField(default=dict, blank=True)
    # The point the leaderboard shows, chosen once at ingestion (apps/runs/summary.py) so
    # ranking reads one row per run instead of every point.
    best_point = models.ForeignKey(
        "Point", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    best_tput_per_gpu = models.FloatField(null=True, blank=True)
    # How many load levels the run measured (its points): the board's row rule keeps a
    # deployment's latest complete sweep against a newer run with fewer (apps/runs/sweeps.py).
    levels = models.PositiveSmallIntegerField(default=0)
    best_meets_slo = models.SmallIntegerField(
        null=True, blank=True, help_text="1 meets, 0 misses, -1 unverifiable, null: no SLO"
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["provenance", "is_public"]),
            # The leaderboard's "latest run per deployment in a scenario": one index probe
            # per deployment (apps/leaderboard/selectors.py), however many runs it has.
            # Ordered by when a run was measured where its document says, else when it
            # landed (MEASURED_AT): an expression index, since a stored generated column
            # made `manage.py check` connect to the database.
            models.Index(
                F("scenario"),
                F("deployment"),
                MEASURED_AT.desc(),
                F("id").desc(),
                name="runs_run_latest_idx",
            ),
            # Each deployment's latest complete sweep: one probe per deployment, as above.
            models.Index(
                F("scenario"),
                F("deployment"),
                F("levels").desc(),
                MEASURED_AT.desc(),
                F("id").desc(),
                name="runs_run_sweep_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"run {self.pk} ({self.provenance})"


class Point(models.Model):
    """One load level of a run, with its aggregates. Key figures are columns for sorting."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="points")
    ordinal = models.PositiveIntegerField()
    label = models.CharField(max_length=100, blank=True)
    concurrency = models.PositiveIntegerField(null=True, blank=True)
    request_rate = models.FloatField(null=True, blank=True)
    window_s = models.FloatField(null=True, blank=True)
    requests_total = models.PositiveIntegerField(null=True, blank=True)
    requests_succeeded = models.PositiveIntegerField(null=True, blank=True)
    requests_failed = models.PositiveIntegerField(null=True, blank=True)
    success_rate = models.FloatField(null=True, blank=True)
    input_tokens = models.BigIntegerField(null=True, blank=True)
    output_tokens = models.BigIntegerField(null=True, blank=True)
    cached_tokens = models.BigIntegerField(null=True, blank=True, help_text="null: not reported")
    token_count_source = models.CharField(max_length=20, blank=True)
    requests_per_s = models.FloatField(null=True, blank=True)
    input_tok_s = models.FloatField(null=True, blank=True)
    output_tok_s = models.FloatField(null=True, blank=True)
    total_tok_s = models.FloatField(null=True, blank=True)
    unlabelled_tok_s = models.FloatField(null=True, blank=True)
    # The key figures' own columns (ttft_p50_ms ...) are added below from the registry.
    goodput_rps = models.FloatField(null=True, blank=True)
    prefix_cache_hit_rate = models.FloatField(null=True, blank=True)
    prompt_length_mismatch_rate = models.FloatField(null=True, blank=True)
    # Whether the load generator, not the server, was the limit (None: not reported); a
    # column so every reader asks workers.figures.PointView the same question.
    client_bound = models.BooleanField(null=True, blank=True)
    tokens_per_chunk = models.FloatField(null=True, blank=True)
    latency_ms = models.JSONField(default=dict, blank=True)
    interactivity = models.JSONField(default=dict, blank=True)
    errors = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["run", "ordinal"]
        constraints = [
            models.UniqueConstraint(fields=["run", "ordinal"], name="unique_point_ordinal")
        ]

    def __str__(self) -> str:
        return f"run {self.run_id} point {self.ordinal}"

    @property
    def level_name(self) -> str:
        """How every page names this load level: its own label, with the concurrency and the
        request rate it does not already state (an imported "c=16" must not read "c=16 c=16")."""
        return level_name(self.label, self.concurrency, self.request_rate, self.ordinal)


# One column per figure the registry keeps on a point (workers.figures.POINT_COLUMNS), named
# by the registry, so a figure's key is spelt in one place (issue 41). The board sorts by
# them and the dumps read them without the distributions; the names are those the
# migrations created.
for _key in figures.POINT_COLUMNS:
    Point.add_to_class(figures.figure(_key).column, models.FloatField(null=True, blank=True))


def level_name(label: str, concurrency: int | None, rate: float | None, ordinal: int) -> str:
    parts = [label] if label else []
    if concurrency and f"c={concurrency}" not in label:
        parts.append(f"c={concurrency}")
    if rate and "req/s" not in label:
        parts.append(f"{rate:g} req/s")
    return " ".join(parts) or f"level {ordinal + 1}"


# The columns of a request record as documents carry them (workers.results.RequestRecord).
REQUEST_RECORD_FIELDS = (
    "i",
    "t_sched_ms",
    "t_send_ms",
    "ttft_ms",
    "ttfo_ms",
    "e2el_ms",
    "tpot_ms",
    "n_in",
    "n_out",
    "cached",
    "chunks",
    "status",
    "http_status",
    "error",
)


class RequestRecord(models.Model):
    """One request of a point. Narrow on purpose: these are bulk-loaded by the 100,000."""

    # No database-level foreign key: records are written only by the ingestion service, in
    # the same transaction as their point, and the per-row constraint check cost ~40% of
    # ingesting 100,000 records (bench/ingest.py). Deletes still cascade through the ORM.
    point = models.ForeignKey(
        Point, on_delete=models.CASCADE, related_name="records", db_constraint=False
    )
    i = models.PositiveIntegerField()
    t_sched_ms = models.FloatField(null=True)
    t_send_ms = models.FloatField()
    ttft_ms = models.FloatField(null=True)
    ttfo_ms = models.FloatField(null=True)
    e2el_ms = models.FloatField(null=True)
    tpot_ms = models.FloatField(null=True)
    n_in = models.PositiveIntegerField(null=True)
    n_out = models.PositiveIntegerField(null=True)
    cached = models.PositiveIntegerField(null=True)
    chunks = models.PositiveIntegerField(null=True)
    status = models.CharField(max_length=20, default="ok")
    http_status = models.PositiveSmallIntegerField(null=True)
    error = models.CharField(max_length=500, blank=True, default="")

    class Meta:
        ordering = ["point", "i"]

    def __str__(self) -> str:
        return f"point {self.point_id} request {self.i}"


class RecordArchive(models.Model):
    """Where retention moved a run's request records (apps/runs/archive.py): one compressed
    Parquet file, checked against this digest and count before the rows were deleted."""

    run = models.OneToOneField(Run, on_delete=models.CASCADE, related_name="record_archive")
    location = models.CharField(max_length=1000, help_text="file:///... or s3://bucket/key")
    sha256 = models.CharField(max_length=64)
    records = models.PositiveBigIntegerField()
    size_bytes = models.PositiveBigIntegerField()
    archived_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"run {self.run_id} records in {self.location}"


class RunTally(models.Model):
    """How many runs each (deployment, scenario, organization, visibility, provenance,
    ranked on the default board) holds, so that aggregates over every run (the board's widest
    views) read a few hundred rows, not every run. Kept by a PostgreSQL trigger on the run
    table (migrations 0012, 0013): every write path counts, bulk ones and raw SQL included, in
    the writer's own transaction. No Django code writes it; SQLite has no trigger and reads the
    runs."""

    deployment = models.ForeignKey(
        "catalog.Deployment", on_delete=models.DO_NOTHING, db_constraint=False, related_name="+"
    )
    scenario = models.ForeignKey(
        "catalog.Scenario",
        null=True,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        related_name="+",
    )
    org = models.ForeignKey(
        "accounts.Organization",
        null=True,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        related_name="+",
    )
    is_public = models.BooleanField()
    provenance = models.CharField(max_length=20)
    ranked = models.BooleanField(
        help_text="the runs have a leaderboard point and pass the board's rules (migration 0013)"
    )
    runs = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["deployment", "scenario", "org", "is_public", "provenance", "ranked"],
                nulls_distinct=False,
                name="unique_run_tally",
            )
        ]

    def __str__(self) -> str:
        return f"{self.runs} runs of deployment {self.deployment_id} in {self.scenario_id}"
