"""Writes for accounts: tokens issued, checked and revoked (remembered per process under a shared
version), organizations and new members, invitations, the audit trail (roles, removal and
ownership are apps.accounts.members')."""

import hashlib
import secrets
import time
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from apps.accounts.models import ApiToken, AuditEvent, Invitation, Membership, Organization, Role
from apps.cache import shared_cache_up

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


def token_create(
    *,
    org: Organization,
    name: str = "",
    actor: str = "",
    scope: str = ApiToken.Scope.WRITE,
    created_by=None,
) -> IssuedToken:
    plaintext = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        org=org,
        name=name,
        prefix=plaintext[:10],
        digest=token_digest(plaintext),
        scope=ApiToken.Scope(scope),
        created_by=created_by,
    )
    if actor:
        audit_record(org=org, actor=actor, action="token.created", target=f"token {token.prefix}")
    return IssuedToken(token=token, plaintext=plaintext)


def token_revoke(*, token: ApiToken, actor: str = "", **detail: object) -> None:
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
        if actor:
            audit_record(
                org=token.org,
                actor=actor,
                action="token.revoked",
                target=f"token {token.prefix}",
                **detail,
            )


LAST_USED_RESOLUTION = timedelta(minutes=1)

# Tokens found by digest are remembered in each web process, so a read with a token costs a
# Redis read instead of an ORM query (a third of a cached run-list read, bench/api_load.py).
# A saved or deleted token or organization bumps TOKENS_VERSION_KEY at once and again when
# its transaction commits, and a remembered token counts only under the version it was read
# at: revoking one is refused by every process at its next request. Only while a shared
# cache (Redis) answers: with a per-process cache or Redis down, every request reads the
# database.
TOKENS_VERSION_KEY = "accounts:tokens-version"
TOKEN_MEMO_S = 30.0  # bounds how long a revocation made while Redis was down goes unseen
TOKEN_MEMO_MAX = 10_000
_token_memo: dict[str, tuple[object, float, ApiToken]] = {}


def tokens_version_bump() -> None:
    """Forget every remembered token, now and again once the change commits: a request
    between the two could remember the row as it was before the commit."""

    def bump() -> None:
        try:
            cache.incr(TOKENS_VERSION_KEY)
        except ValueError:  # not set yet (or evicted): a new random one does the same
            cache.set(TOKENS_VERSION_KEY, secrets.randbits(62), timeout=None)

    bump()
    transaction.on_commit(bump)


def _memo_version() -> object | None:
    if not shared_cache_up():
        return None
    # Random at first (and after an eviction), so a version never comes back to one a
    # process remembered tokens under.
    return cache.get_or_set(TOKENS_VERSION_KEY, lambda: secrets.randbits(62), timeout=None)


def token_authenticate(plaintext: str) -> ApiToken | None:
    """The active token for this plaintext, or None (unknown or revoked alike)."""
    digest = token_digest(plaintext)
    version = _memo_version()
    remembered = _token_memo.get(digest) if version is not None else None
    if (
        remembered is not None
        and remembered[0] == version
        and time.monotonic() - remembered[1] < TOKEN_MEMO_S
    ):
        token: ApiToken | None = remembered[2]
    else:
        token = (
            ApiToken.objects.select_related("org")
            .filter(digest=digest, revoked_at__isnull=True)
            .first()
        )
        if token is not None and version is not None:
            if len(_token_memo) >= TOKEN_MEMO_MAX:
                _token_memo.clear()
            _token_memo[digest] = (version, time.monotonic(), token)
    now = timezone.now()
    if token is not None and (
        token.last_used_at is None or now - token.last_used_at > LAST_USED_RESOLUTION
    ):
        # At most one write a minute per token: every request writing the same row made
        # 32 concurrent readers queue on its lock.
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    return token


# Audit trail --------------------------------------------------------------------------------


def audit_record(
    *, org: Organization | None, actor: str, action: str, target: str, **detail: object
) -> AuditEvent | None:
    """Append to the organization's trail. Objects without an organization have no trail."""
    if org is None:
        return None
    return AuditEvent.objects.create(
        org=org, actor=actor[:300], action=action, target=target[:300], detail=detail
    )


# Organizations and members -----------------------------------------------------------------


class MembershipError(ValueError):
    """A membership change that would leave the organization without an owner, and so on
    (the rules are apps.accounts.members')."""


@transaction.atomic
def organization_create(*, name: str, owner) -> Organization:
    """A new organization with `owner` as its owner; the slug is made unique from the name."""
    base = slugify(name)[:90]
    if not base:
        raise MembershipError("the name needs at least one letter or digit")
    slug, n = base, 1
    while Organization.objects.filter(slug=slug).exists():
        n += 1
        slug = f"{base}-{n}"
    org = Organization.objects.create(slug=slug, name=name.strip())
    Membership.objects.create(org=org, user=owner, role=Role.OWNER)
    audit_record(org=org, actor=actor_name(owner), action="organization.created", target=org.slug)
    return org


def member_add(*, org: Organization, user, role: str = Role.MEMBER, actor: str = "") -> Membership:
    membership, created = Membership.objects.get_or_create(
        org=org, user=user, defaults={"role": role}
    )
    if created:
        audit_record(
            org=org,
            actor=actor or actor_name(user),
            action="member.added",
            target=actor_name(user),
            role=role,
        )
    return membership


def invitations_withdraw(*, org: Organization, user, actor: str) -> None:
    """The open invitations a person made stop with the power that made them: an "anyone
    with the link" invitation must not let a removed or demoted admin back in as admin."""
    for invitation in _open_invitations().filter(org=org, created_by=user):
        invitation_revoke(invitation=invitation, actor=actor)


def tokens_of_departed(*, membership: Membership) -> None:
    """A membership deleted another way (its person's account deleted, say): the tokens
    they made are revoked as members.member_remove would (pre_delete of Membership, apps.py)."""
    org, who = membership.org, actor_name(membership.user)
    made = ApiToken.objects.filter(org=org, created_by=membership.user, revoked_at__isnull=True)
    for token in made:
        token_revoke(token=token, actor="inferboard", reason=f"{who} is no longer a member")


@dataclass(frozen=True)
class IssuedInvitation:
    invitation: Invitation
    plaintext: str


def invitation_create(
    *,
    org: Organization,
    created_by,
    role: str = Role.MEMBER,
    email: str = "",
    any_address: bool = False,
) -> IssuedInvitation:
    """A link for `email` (only a person with that verified address may accept it), or for
    anyone signed in when `any_address` says so explicitly. Raises MembershipError with
    neither."""
    email = email.strip()
    if role == Role.OWNER:
        raise MembershipError(
            "role: an invitation is for admin, member or viewer (owners are made by transfer)"
        )
    if not email and not any_address:
        raise MembershipError("email: give the invited address, or allow any address")
    plaintext = secrets.token_urlsafe(24)
    invitation = Invitation.objects.create(
        org=org,
        role=Role(role),
        email=email,
        any_address=any_address,
        digest=token_digest(plaintext),
        created_by=created_by,
    )
    audit_record(
        org=org,
        actor=actor_name(created_by),
        action="invitation.created",
        target=email or f"invitation {invitation.pk} (any address)",
        role=role,
    )
    return IssuedInvitation(invitation=invitation, plaintext=plaintext)


def _open_invitations():
    oldest = timezone.now() - timedelta(days=settings.INVITATION_MAX_AGE_DAYS)
    return Invitation.objects.filter(
        accepted_at__isnull=True, revoked_at__isnull=True, created_at__gte=oldest
    )


def invitations_open(*, org: Organization):
    """The organization's invitations that can still be accepted, newest first."""
    return _open_invitations().filter(org=org).select_related("created_by")


def invitation_get(plaintext: str) -> Invitation | None:
    """The open invitation for this link; None when unknown, used, revoked or expired."""
    return _open_invitations().select_related("org").filter(digest=token_digest(plaintext)).first()


def _verified_addresses(user) -> set[str]:
    from allauth.account.models import EmailAddress

    rows = EmailAddress.objects.filter(user=user, verified=True).values_list("email", flat=True)
    return {address.lower() for address in rows}


def invitation_may_accept(invitation: Invitation, user) -> bool:
    return invitation.any_address or (
        bool(invitation.email) and invitation.email.lower() in _verified_addresses(user)
    )


@transaction.atomic
def invitation_accept(*, invitation: Invitation, user) -> Membership:
    # Lock the row so one link makes one member, even when opened twice at once.
    invitation = Invitation.objects.select_for_update().get(pk=invitation.pk)
    if invitation.accepted_at is not None or invitation.revoked_at is not None:
        raise MembershipError("this invitation was already used or revoked")
    if timezone.now() >= invitation.expires_at:
        raise MembershipError("this invitation has expired; ask for a new one")
    if not invitation_may_accept(invitation, user):
        raise MembershipError(
            "this invitation is for another address: sign in with the address it was sent to"
        )
    invitation.accepted_at = timezone.now()
    invitation.accepted_by = user
    invitation.save(update_fields=["accepted_at", "accepted_by"])
    audit_record(
        org=invitation.org,
        actor=actor_name(user),
        action="invitation.accepted",
        target=invitation.email or f"invitation {invitation.pk}",
    )
    return member_add(org=invitation.org, user=user, role=invitation.role)


def invitation_revoke(*, invitation: Invitation, actor: str) -> None:
    if invitation.revoked_at is None and invitation.accepted_at is None:
        invitation.revoked_at = timezone.now()
        invitation.save(update_fields=["revoked_at"])
        audit_record(
            org=invitation.org,
            actor=actor,
            action="invitation.revoked",
            target=invitation.email or f"invitation {invitation.pk}",
        )


def actor_name(user) -> str:
    """How the audit trail names a person: their email, else their user name."""
    return getattr(user, "email", "") or user.get_username()


DEMO_EMAIL = "demo@inferboard.localhost"


def demo_user_ensure(*, org: Organization) -> tuple[str, str]:
    """The local demo's person: owner of the demo organization, email already verified, a
    fresh password each start. Returns (email, password) for the demo to print."""
    from allauth.account.models import EmailAddress
    from django.contrib.auth import get_user_model

    user, _ = get_user_model().objects.get_or_create(
        username="demo", defaults={"email": DEMO_EMAIL}
    )
    password = secrets.token_urlsafe(12)
    user.email = DEMO_EMAIL
    user.set_password(password)
    user.save()
    EmailAddress.objects.update_or_create(
        user=user, email=DEMO_EMAIL, defaults={"verified": True, "primary": True}
    )
    member_add(org=org, user=user, role=Role.OWNER, actor="demo")
    return DEMO_EMAIL, password
