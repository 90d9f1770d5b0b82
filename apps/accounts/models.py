"""Organizations, their members and roles, invitations, ownership offers, API tokens (digests
only), the sessions people signed in with, and the audit trail."""

from datetime import timedelta

from django.conf import settings
from django.db import models


class Organization(models.Model):
    slug = models.SlugField(max_length=100, unique=True)
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.slug


class ApiToken(models.Model):
    """A bearer token. Only its SHA-256 digest is stored; the plaintext is shown once."""

    class Scope(models.TextChoices):
        # Everything the organization may do through the API: submit, import, run jobs.
        WRITE = "write"
        # Reads only (the organization's private runs, prices): dashboards, exports.
        READ = "read"

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="tokens")
    name = models.CharField(max_length=100, blank=True)
    # The first characters identify a token in lists and logs without revealing it.
    prefix = models.CharField(max_length=16)
    digest = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    scope = models.CharField(max_length=10, choices=Scope.choices, default=Scope.WRITE)
    # Who made it on /org/ (or had it reassigned to them): when they leave the organization,
    # their tokens are revoked or reassigned (apps.accounts.services.member_remove). Tokens
    # made on the command line (createtoken) have no maker and stay until revoked.
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )

    def __str__(self) -> str:
        return f"{self.org.slug}:{self.prefix}…"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class Role(models.TextChoices):
    """Ordered from most to least power; `role_allows` compares by this order."""

    OWNER = "owner"
    ADMIN = "admin"
    MEMBER = "member"
    VIEWER = "viewer"


class Membership(models.Model):
    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.MEMBER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["org", "user"]
        constraints = [models.UniqueConstraint(fields=["org", "user"], name="unique_membership")]

    def __str__(self) -> str:
        return f"{self.user} in {self.org} ({self.role})"


class Invitation(models.Model):
    """A link that makes the invited person (signed in with that verified address) a member,
    for INVITATION_MAX_AGE_DAYS; or anyone signed in, when the admin said so (`any_address`).
    Only its digest is stored."""

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="invitations")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.MEMBER)
    email = models.EmailField(blank=True, help_text="the only address that may accept it")
    any_address = models.BooleanField(
        default=False, help_text="anyone signed in may accept it (the admin chose so)"
    )
    digest = models.CharField(max_length=64, unique=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    accepted_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"invitation to {self.org} ({self.role})"

    @property
    def expires_at(self):
        from datetime import timedelta

        from django.conf import settings

        return self.created_at + timedelta(days=settings.INVITATION_MAX_AGE_DAYS)


class AuditEvent(models.Model):
    """Who did what to which object of an organization, and when. Written, never edited."""

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="audit_events")
    # A person's email or a token's prefix: kept as text so the record outlives both.
    actor = models.CharField(max_length=300)
    action = models.CharField(max_length=50, db_index=True)
    target = models.CharField(max_length=300)
    detail = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.actor} {self.action} {self.target}"


class OwnershipTransfer(models.Model):
    """An owner's offer of ownership to a member: it takes effect only when that member
    accepts it (apps.accounts.services.ownership_accept), so no one is made an owner, and no
    owner steps down, without both people saying so. Open for INVITATION_MAX_AGE_DAYS."""

    class Outcome(models.TextChoices):
        ACCEPTED = "accepted"
        DECLINED = "declined"  # by the member it was offered to
        WITHDRAWN = "withdrawn"  # by the owner who offered it, or because either left

    org = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="ownership_transfers"
    )
    offered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    offered_to = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    # The offering owner becomes an admin when it is accepted (a hand-over), or stays owner.
    steps_down = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    outcome = models.CharField(max_length=10, choices=Outcome.choices, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"ownership of {self.org} offered to {self.offered_to}"

    @property
    def expires_at(self):
        return self.created_at + timedelta(days=settings.INVITATION_MAX_AGE_DAYS)


class SignedInSession(models.Model):
    """Which session keys a person signed in with (user_logged_in), so the sessions of
    someone removed from an organization can be ended (services.member_remove): Django's
    session table cannot be searched by person."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    session_key = models.CharField(max_length=40, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"session of {self.user}"
