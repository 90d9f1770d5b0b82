from django.db import models


class Organization(models.Model):
    slug = models.SlugField(max_length=100, unique=True)
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.slug


class ApiToken(models.Model):
    """A bearer token. Only its SHA-256 digest is stored; the plaintext is shown once."""

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="tokens")
    name = models.CharField(max_length=100, blank=True)
    # The first characters identify a token in lists and logs without revealing it.
    prefix = models.CharField(max_length=16)
    digest = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.org.slug}:{self.prefix}…"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None
