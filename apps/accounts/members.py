"""Members' roles, removal and ownership transfers, each under one lock on the organization's
owner memberships, so no sequence of requests leaves an organization without an owner.

The rules: anyone may leave; an admin removes or re-roles members, viewers and admins; only an
owner removes or demotes an owner; ownership moves only by an offer its recipient accepts
(`ownership_offer`, `ownership_accept`), never by setting a role. Every change here first locks
the organization's owner memberships (SELECT ... FOR UPDATE), then re-reads the row it changes
and the caller's role: two owners removing, demoting or leaving at the same instant run one
after the other, and the second sees what the first left (PostgreSQL re-reads a row it waited
for, and leaves out one deleted or demoted meanwhile). Removal ends what the person held: the
tokens they made (revoked, or reassigned when the remover chose so), their open invitations
and ownership offers, their signed-in sessions (when someone else removed them) and, through
Membership's pre_delete (apps/regressions/apps.py), the alert subscriptions addressed to them.
"""

from __future__ import annotations

from datetime import timedelta
from importlib import import_module
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from apps.accounts.models import (
    ApiToken,
    Membership,
    Organization,
    OwnershipTransfer,
    Role,
    SignedInSession,
)
from apps.accounts.scoping import require_role, role_allows
from apps.accounts.services import (
    MembershipError,
    actor_name,
    audit_record,
    invitations_withdraw,
    token_revoke,
    tokens_version_bump,
)


class TokensOf:
    """What becomes of the API tokens a removed member made."""

    REVOKE = "revoke"
    REASSIGN = "reassign"


def _lock_owners(org: Organization) -> set[int]:
    """The user ids of the organization's owners, their memberships locked until the
    transaction ends. Taken first by every change here, in one order (by id), so two changes
    never deadlock and never both count an owner the other is removing."""
    rows = Membership.objects.select_for_update().filter(org=org, role=Role.OWNER).order_by("pk")
    return set(rows.values_list("user_id", flat=True))


def _locked(membership: Membership) -> Membership:
    """The membership as it stands now, locked; MembershipError when it is gone."""
    row = Membership.objects.select_for_update().filter(pk=membership.pk).first()
    if row is None:
        raise MembershipError("they are no longer a member")
    row.org, row.user = membership.org, membership.user
    return row


def _may_change(target: Membership, by: Any) -> None:
    """PermissionDenied unless `by` may remove or re-role `target`, by roles read under the
    lock: only an owner acts on an owner (themself included), an admin on anyone else. A
    caller of None is the system (a command, a test) and may."""
    if by is None:
        return
    needed = Role.OWNER if target.role == Role.OWNER else Role.ADMIN
    if by.pk == target.user_id and target.role != Role.OWNER:
        return  # leaving, or lowering one's own role, needs no one's leave
    require_role(target.org, by, needed)


def _only_owner(target: Membership, owners: set[int]) -> bool:
    return target.role == Role.OWNER and not owners - {target.user_id}


@transaction.atomic
def member_remove(
    *,
    membership: Membership,
    actor: str,
    by: Any = None,
    tokens: str = TokensOf.REVOKE,
    reassign_to: Any = None,
) -> None:
    """Removal (by `by`) or leaving (`by` is the member); the last owner cannot go.

    The tokens the person made stop working (`tokens="revoke"`), or keep working as
    `reassign_to`'s (`tokens="reassign"`, the remover's choice); their open invitations and
    ownership offers are withdrawn; when someone else removed them, their signed-in sessions
    end. Each step is audit-logged."""
    owners = _lock_owners(membership.org)
    target = _locked(membership)
    _may_change(target, by)
    if _only_owner(target, owners):
        raise MembershipError("the last owner cannot leave; hand ownership to someone first")
    if tokens == TokensOf.REASSIGN and (reassign_to is None or reassign_to.pk == target.user_id):
        raise MembershipError("tokens: reassign them to someone who stays")
    org, person, who = target.org, target.user, actor_name(target.user)
    made = ApiToken.objects.filter(org=org, created_by=person, revoked_at__isnull=True)
    for token in made:
        if tokens == TokensOf.REASSIGN:
            token.created_by = reassign_to
            token.save(update_fields=["created_by"])
            audit_record(
                org=org,
                actor=actor,
                action="token.reassigned",
                target=f"token {token.prefix}",
                made_by=who,
                now_of=actor_name(reassign_to),
            )
        else:
            token_revoke(token=token, actor=actor, reason=f"{who} left the organization")
    invitations_withdraw(org=org, user=person, actor=actor)
    _transfers_withdraw(org=org, user=person, actor=actor)
    target.delete()
    audit_record(org=org, actor=actor, action="member.removed", target=who)
    if by is not None and by.pk != person.pk:
        ended = sessions_end(person)
        if ended:
            audit_record(org=org, actor=actor, action="member.signed_out", target=who, ended=ended)


@transaction.atomic
def member_set_role(*, membership: Membership, role: str, actor: str, by: Any = None) -> Membership:
    """A new role below owner (ownership moves by an accepted transfer). Only an owner
    demotes an owner, and not the last one."""
    if role == Role.OWNER:
        raise MembershipError(
            "role: ownership moves by an accepted transfer: offer it, and they accept"
        )
    owners = _lock_owners(membership.org)
    target = _locked(membership)
    _may_change(target, by)
    if by is not None and by.pk == target.user_id and not role_allows(target.role, role):
        raise PermissionDenied("no one raises their own role")
    if target.role == role:
        return target
    if _only_owner(target, owners):
        raise MembershipError("the last owner cannot step down; hand ownership to someone first")
    was = target.role
    target.role = Role(role)
    target.save(update_fields=["role"])
    if not role_allows(role, was):  # lowered
        invitations_withdraw(org=target.org, user=target.user, actor=actor)
        if was == Role.OWNER:
            _transfers_withdraw(org=target.org, user=target.user, actor=actor, received=False)
        if not role_allows(role, Role.MEMBER):
            # A viewer reads only: the tokens they made are reduced to reads.
            made = ApiToken.objects.filter(
                org=target.org, created_by=target.user, scope=ApiToken.Scope.WRITE
            )
            if made.update(scope=ApiToken.Scope.READ):
                tokens_version_bump()
    audit_record(
        org=target.org, actor=actor, action="member.role", target=actor_name(target.user), role=role
    )
    return target


# Ownership transfers ------------------------------------------------------------------------


def _open_transfers() -> QuerySet[OwnershipTransfer]:
    oldest = timezone.now() - timedelta(days=settings.INVITATION_MAX_AGE_DAYS)
    return OwnershipTransfer.objects.filter(closed_at__isnull=True, created_at__gte=oldest)


def transfers_open(*, org: Organization | None) -> QuerySet[OwnershipTransfer]:
    """Ownership offers still open, newest first: the organization's, or all with None."""
    rows = _open_transfers() if org is None else _open_transfers().filter(org=org)
    return rows.select_related("offered_by", "offered_to")


def _close(transfer: OwnershipTransfer, outcome: str, actor: str) -> None:
    transfer.closed_at, transfer.outcome = timezone.now(), outcome
    transfer.save(update_fields=["closed_at", "outcome"])
    audit_record(
        org=transfer.org,
        actor=actor,
        action=f"ownership.{outcome}",
        target=actor_name(transfer.offered_to),
    )


def _transfers_withdraw(*, org: Organization, user: Any, actor: str, received: bool = True) -> None:
    """Offers `user` made (and, with `received`, was made) stop with their ownership or
    membership: an offer from someone who is no longer an owner gives nothing."""
    mine = Q(offered_by=user) | Q(offered_to=user) if received else Q(offered_by=user)
    for transfer in _open_transfers().filter(mine, org=org):
        _close(transfer, OwnershipTransfer.Outcome.WITHDRAWN, actor)


@transaction.atomic
def ownership_offer(
    *, membership: Membership, by: Any, actor: str, steps_down: bool = True
) -> OwnershipTransfer:
    """An owner (`by`) offers ownership to a member; nothing changes until they accept. A
    new offer to the same person replaces an open one."""
    owners = _lock_owners(membership.org)
    if by.pk not in owners:
        raise PermissionDenied("only an owner may offer ownership")
    target = _locked(membership)
    if target.role == Role.OWNER:
        raise MembershipError("they are an owner already")
    earlier = _open_transfers().filter(org=target.org, offered_to=target.user)
    for transfer in earlier:
        _close(transfer, OwnershipTransfer.Outcome.WITHDRAWN, actor)
    transfer = OwnershipTransfer.objects.create(
        org=target.org, offered_by=by, offered_to=target.user, steps_down=steps_down
    )
    audit_record(
        org=target.org,
        actor=actor,
        action="ownership.offered",
        target=actor_name(target.user),
        steps_down=steps_down,
    )
    return transfer


@transaction.atomic
def ownership_accept(*, transfer: OwnershipTransfer, user: Any, actor: str) -> Membership:
    """The member it was offered to becomes an owner; the offering owner becomes an admin
    when the offer was a hand-over. Refused when the offer is no longer open, or whoever
    made it is no longer an owner."""
    owners = _lock_owners(transfer.org)
    row = _open_transfers().select_for_update().filter(pk=transfer.pk).first()
    if row is None:
        raise MembershipError("this offer was already answered, withdrawn or has expired")
    if row.offered_to_id != user.pk:
        raise PermissionDenied("this offer is someone else's")
    if row.offered_by_id not in owners:
        _close(row, OwnershipTransfer.Outcome.WITHDRAWN, actor)
        raise MembershipError("whoever offered it is no longer an owner")
    taker = Membership.objects.select_for_update().filter(org=row.org, user=user).first()
    if taker is None:
        raise MembershipError("you are no longer a member")
    taker.role = Role.OWNER
    taker.save(update_fields=["role"])
    if row.steps_down:
        Membership.objects.filter(org=row.org, user_id=row.offered_by_id).update(role=Role.ADMIN)
    _close(row, OwnershipTransfer.Outcome.ACCEPTED, actor)
    return taker


@transaction.atomic
def ownership_decline(*, transfer: OwnershipTransfer, by: Any, actor: str) -> None:
    """The member it was offered to declines it, or the owner who made it withdraws it."""
    row = _open_transfers().select_for_update().filter(pk=transfer.pk).first()
    if row is None:
        return
    if by.pk not in (row.offered_to_id, row.offered_by_id):
        raise PermissionDenied("only the two people an offer is between may close it")
    declined = by.pk == row.offered_to_id
    outcome = (
        OwnershipTransfer.Outcome.DECLINED if declined else OwnershipTransfer.Outcome.WITHDRAWN
    )
    _close(row, outcome, actor)


# Sessions -----------------------------------------------------------------------------------


def session_signed_in(*, user: Any, session_key: str | None) -> None:
    """Remember a session a person signed in with (user_logged_in, apps.py); forget their
    sessions that have ended since."""
    if not session_key:
        return
    SignedInSession.objects.update_or_create(session_key=session_key, defaults={"user": user})


def session_signed_out(*, session_key: str | None) -> None:
    if session_key:
        SignedInSession.objects.filter(session_key=session_key).delete()


def sessions_end(user: Any) -> int:
    """End every session the person signed in with, whatever the session engine: they sign
    in again and reach only the organizations they are still in. The number ended."""
    store = import_module(settings.SESSION_ENGINE).SessionStore
    rows = SignedInSession.objects.filter(user=user)
    keys = list(rows.values_list("session_key", flat=True))
    for key in keys:
        store(session_key=key).delete()
    rows.delete()
    return len(keys)
