"""The catalog: accelerators and their price tiers, models, engines, deployments (with a
fingerprint over what was served) and scenarios."""

import textwrap

from django.db import models


class Accelerator(models.Model):
    sku = models.CharField(max_length=50, unique=True)
    vendor = models.CharField(max_length=50, blank=True)
    hbm_gb = models.FloatField(null=True, blank=True)
    hbm_tb_s = models.FloatField(null=True, blank=True)
    board_power_w = models.FloatField(null=True, blank=True)
    all_in_kw = models.FloatField(null=True, blank=True, help_text="facility share per GPU")
    peak_tflops = models.JSONField(default=dict, blank=True, help_text="dense, per precision")
    source = models.TextField(blank=True)
    note = models.TextField(blank=True)

    class Meta:
        ordering = ["vendor", "sku"]

    def __str__(self) -> str:
        return self.sku

    @property
    def pool(self) -> str:
        return f"pool.{self.sku.lower()}"


class PriceTier(models.Model):
    """A $/GPU-hour price. Reference tiers have no organization and are public."""

    accelerator = models.ForeignKey(Accelerator, on_delete=models.CASCADE, related_name="prices")
    tier = models.CharField(max_length=50)
    usd_per_gpu_hour = models.FloatField()
    org = models.ForeignKey(
        "accounts.Organization", null=True, blank=True, on_delete=models.CASCADE
    )
    source = models.TextField(blank=True)

    class Meta:
        ordering = ["accelerator", "tier"]
        constraints = [
            models.UniqueConstraint(
                fields=["accelerator", "tier"],
                condition=models.Q(org__isnull=True),
                name="unique_reference_tier",
            ),
            models.UniqueConstraint(fields=["accelerator", "tier", "org"], name="unique_org_tier"),
        ]

    def __str__(self) -> str:
        return f"{self.accelerator.sku} {self.tier} ${self.usd_per_gpu_hour}/GPU-hr"


class Model(models.Model):
    name = models.CharField(max_length=200, unique=True)
    family = models.CharField(max_length=200, blank=True)

    def __str__(self) -> str:
        return self.name


class Engine(models.Model):
    name = models.CharField(max_length=200, unique=True)

    def __str__(self) -> str:
        return self.name


class Deployment(models.Model):
    """What was served. The fingerprint hashes every served fact, so equal means identical."""

    fingerprint = models.CharField(max_length=64, unique=True)
    model = models.ForeignKey(Model, on_delete=models.PROTECT, related_name="deployments")
    accelerator = models.ForeignKey(
        Accelerator, on_delete=models.PROTECT, related_name="deployments"
    )
    gpus = models.PositiveIntegerField()
    nodes = models.PositiveIntegerField(default=1)
    engine = models.ForeignKey(Engine, on_delete=models.PROTECT, related_name="deployments")
    engine_version = models.CharField(max_length=100, blank=True)
    image_digest = models.CharField(max_length=200, blank=True)
    quant_weights = models.CharField(max_length=100)
    quant_activations = models.CharField(max_length=100, blank=True)
    quant_kv_cache = models.CharField(max_length=100, blank=True)
    quant_note = models.CharField(max_length=500, blank=True)
    # None: the source did not state it (which is not the same as 1).
    tp = models.PositiveIntegerField(null=True, blank=True)
    dp = models.PositiveIntegerField(null=True, blank=True)
    ep = models.PositiveIntegerField(null=True, blank=True)
    pp = models.PositiveIntegerField(null=True, blank=True)
    dp_attention = models.BooleanField(null=True, blank=True)
    parallelism_label = models.CharField(max_length=100, blank=True)
    spec_method = models.CharField(max_length=100, blank=True)
    spec_draft_tokens = models.PositiveIntegerField(null=True, blank=True)
    # Prefill and decode on separate pools: `gpus` counts both; each pool keeps its own
    # GPUs, engine instances and layout ("TP8×EP8"), as far as the source states them.
    disaggregated = models.BooleanField(default=False, db_index=True)
    prefill_gpus = models.PositiveIntegerField(null=True, blank=True)
    decode_gpus = models.PositiveIntegerField(null=True, blank=True)
    prefill_workers = models.PositiveIntegerField(null=True, blank=True)
    decode_workers = models.PositiveIntegerField(null=True, blank=True)
    prefill_layout = models.CharField(max_length=100, blank=True)
    decode_layout = models.CharField(max_length=100, blank=True)
    # None: not stated (most sources say nothing about nodes beyond their count).
    multinode = models.BooleanField(null=True, blank=True)
    engine_flags = models.JSONField(default=list, blank=True)
    notes = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return (
            f"{self.model} · {self.gpus}×{self.accelerator} · {self.engine} "
            f"{self.engine_version} · {self.quant_weights} · {self.parallelism_label}"
        ).replace("  ", " ")

    @property
    def serving_label(self) -> str:
        """'disaggregated 1P TP8 + 2D TP8×EP8' or 'aggregated', as comparisons name it."""
        if self.disaggregated:
            return f"disaggregated {self.parallelism_label}"
        return "aggregated"


def short_flag(text: str, width: int = 48) -> str:
    """An engine flag as a row label or column heading names it: cut between words with an
    ellipsis, never mid-word ("…chosen by hand ins" told readers nothing)."""
    return textwrap.shorten(text, width=width, placeholder=" …")


class Scenario(models.Model):
    """A workload shape. Documents map onto scenarios by shape, or by naming a preset."""

    slug = models.SlugField(max_length=100, unique=True)
    name = models.CharField(max_length=200)
    is_preset = models.BooleanField(default=False)
    shape_key = models.CharField(max_length=200, unique=True)
    input_tokens = models.PositiveIntegerField()
    output_tokens = models.PositiveIntegerField()
    # Null: the run's source did not state it (imports); presets and the load generator do.
    length_spread = models.FloatField(null=True, blank=True, default=0)
    prefix_cache_hit_rate = models.FloatField(null=True, blank=True, default=0)
    dataset = models.CharField(max_length=100, default="random")
    arrival = models.CharField(max_length=10, default="closed")
    concurrency = models.JSONField(default=list, blank=True, help_text="default sweep")
    warmup_requests = models.PositiveIntegerField(default=0)
    duration_s = models.FloatField(null=True, blank=True)
    request_count = models.PositiveIntegerField(null=True, blank=True)
    slo_ttft_ms = models.FloatField(null=True, blank=True)
    slo_ttft_percentile = models.FloatField(default=99)
    slo_tpot_ms = models.FloatField(null=True, blank=True)
    slo_e2el_ms = models.FloatField(null=True, blank=True)
    # Bounds beyond the legacy columns above, as workers.result_facts.SloBound dicts; together
    # they are one workers.slo.Slo (apps.runs.summary.scenario_slo).
    slo_bounds = models.JSONField(default=list, blank=True)
    slo_min_success_rate = models.FloatField(default=0.99)
    created_by = models.ForeignKey(
        "accounts.Organization", null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-is_preset", "slug"]

    def __str__(self) -> str:
        return self.name


class PublishedFigure(models.Model):
    """A figure from the reference data, kept verbatim with its citation (runs or not)."""

    key = models.CharField(max_length=200, unique=True)
    source_key = models.CharField(max_length=100)
    citation = models.TextField()
    payload = models.JSONField()

    class Meta:
        ordering = ["key"]

    def __str__(self) -> str:
        return self.key
