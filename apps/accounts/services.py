import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.utils import timezone
from django.utils.text import slugify

from apps.accounts.models import ApiToken, Organization

TOKEN_PREFIX = "ib_"


@dataclass(frozen=True)
class IssuedToken:
    token: ApiToken
    plaintext: str


def token_digest(plaintext: str) -> str:
    # Tokens carry 256 random bits, so a fast hash is enough: there is nothing to brute-force.
    return hashlib.sha256(plaintext.encode()).hexdigest()


def organization_get_or_create(*, slug: str, name: str = "") -> Organization:
    clean = slugify(slug)
    if not clean:
        raise ValueError(f"organization slug {slug!r} has no usable characters")
    org, _ = Organization.objects.get_or_create(slug=clean, defaults={"name": name or slug})
    return org


def token_create(*, org: Organization, name: str = "") -> IssuedToken:
    plaintext = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        org=org, name=name, prefix=plaintext[:10], digest=token_digest(plaintext)
    )
    return IssuedToken(token=token, plaintext=plaintext)


def token_revoke(*, token: ApiToken) -> None:
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])


LAST_USED_RESOLUTION = timedelta(minutes=1)


def token_authenticate(plaintext: str) -> ApiToken | None:
    """The active token for this plaintext, or None (unknown or revoked alike)."""
    token = (
        ApiToken.objects.select_related("org")
        .filter(digest=token_digest(plaintext), revoked_at__isnull=True)
        .first()
    )
    now = timezone.now()
    if token is not None and (
        token.last_used_at is None or now - token.last_used_at > LAST_USED_RESOLUTION
    ):
        # At most one write a minute per token: every request writing the same row made
        # 32 concurrent readers queue on its lock.
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token
