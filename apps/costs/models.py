"""An organization's price profiles and saved procurement pages.

A price profile is a named price book: $/GPU-hr per accelerator (typed or from capex +
opex, resolved to $/GPU-hr when saved) and, where the buyer sells tokens, the prices they
charge per million input, output and cached-input tokens. One profile per organization is
active: every page that shows money reads it through `apps.costs.prices`.
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models


class OrgNamed(models.Model):
    """What an organization keeps under a name it chose, and who made it."""

    name = models.CharField(max_length=100)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        abstract = True
        ordering = ["org", "name"]

    def __str__(self) -> str:
        return f"{self.org.slug}: {self.name}"


class PriceProfile(OrgNamed):
    org = models.ForeignKey(
        "accounts.Organization", on_delete=models.CASCADE, related_name="price_profiles"
    )
    # SKU (upper case) -> $/GPU-hr.
    usd_per_gpu_hour = models.JSONField(default=dict)
    # What the buyer charges per million tokens, where they sell tokens (None: not set).
    sell_input_usd_per_mtok = models.FloatField(null=True, blank=True)
    sell_output_usd_per_mtok = models.FloatField(null=True, blank=True)
    sell_cached_input_usd_per_mtok = models.FloatField(null=True, blank=True)
    active = models.BooleanField(default=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta(OrgNamed.Meta):
        constraints = [
            models.UniqueConstraint(fields=["org", "name"], name="unique_price_profile_name"),
            models.UniqueConstraint(
                fields=["org"], condition=models.Q(active=True), name="one_active_price_profile"
            ),
        ]


def _slug() -> str:
    return secrets.token_urlsafe(9)


class SavedPage(OrgNamed):
    """A workload or a whole comparison saved by name: the /costs/ query that reproduces it,
    with the prices it used written into the query, so its permalink needs no account."""

    class Kind(models.TextChoices):
        WORKLOAD = "workload"
        COMPARISON = "comparison"

    org = models.ForeignKey(
        "accounts.Organization", on_delete=models.CASCADE, related_name="saved_cost_pages"
    )
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.COMPARISON)
    query = models.TextField()
    slug = models.CharField(max_length=20, unique=True, default=_slug)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta(OrgNamed.Meta):
        constraints = [
            models.UniqueConstraint(fields=["org", "kind", "name"], name="unique_saved_page_name"),
        ]
