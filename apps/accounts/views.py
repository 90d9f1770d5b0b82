"""Pages for people: their organizations, members and roles, invitations, API tokens and the
audit trail. Every check goes through apps.accounts.scoping."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from apps.accounts import members, services
from apps.accounts.models import (
    ApiToken,
    Invitation,
    Membership,
    Organization,
    OwnershipTransfer,
    Role,
)
from apps.accounts.scoping import (
    DEFAULT_VISIBILITY,
    actor_of,
    choose_org,
    current_org,
    orgs_of,
    require_role,
)


def _org_or_403(request: HttpRequest, needed: str) -> Organization:
    org = current_org(request)
    require_role(org, request.user, needed)
    assert org is not None  # require_role refuses a missing organization
    return org


@login_required
def org_home(request: HttpRequest) -> HttpResponse:
    org = current_org(request)
    membership = Membership.objects.filter(org=org, user=request.user).first()
    context = {
        "org": org,
        "membership": membership,
        "is_admin": membership is not None and membership.role in (Role.OWNER, Role.ADMIN),
        "is_owner": membership is not None and membership.role == Role.OWNER,
        "orgs": orgs_of(request.user),
        "members": org.memberships.select_related("user") if org else [],
        "tokens": org.tokens.select_related("created_by").order_by("-created_at") if org else [],
        "invitations": services.invitations_open(org=org) if org else [],
        "transfers": members.transfers_open(org=org) if org else [],
        "audit": org.audit_events.all()[:100] if org else [],
        # Ownership is offered and accepted (members.ownership_offer), never set as a role.
        "roles": [(value, label) for value, label in Role.choices if value != Role.OWNER],
        "new_token": request.session.pop("new_token", None),
        "new_invite": request.session.pop("new_invite", None),
        # What a token's submitted runs are unless it asks otherwise (the API's one default).
        "submit_visibility": DEFAULT_VISIBILITY,
    }
    return render(request, "accounts/org.html", context)


@login_required
@require_POST
def org_create(request: HttpRequest) -> HttpResponse:
    try:
        org = services.organization_create(name=request.POST.get("name", ""), owner=request.user)
    except services.MembershipError as exc:
        messages.error(request, f"name: {exc}")
        return redirect("accounts:org-home")
    choose_org(request, org)
    return redirect("accounts:org-home")


@login_required
@require_POST
def org_switch(request: HttpRequest, org_id: int) -> HttpResponse:
    choose_org(request, get_object_or_404(orgs_of(request.user), pk=org_id))
    return redirect("accounts:org-home")


@login_required
@require_POST
def invite_create(request: HttpRequest) -> HttpResponse:
    org = _org_or_403(request, Role.ADMIN)
    role = request.POST.get("role", Role.MEMBER)
    if role not in Role.values or role == Role.OWNER:
        messages.error(request, "role: choose admin, member or viewer")
        return redirect("accounts:org-home")
    try:
        issued = services.invitation_create(
            org=org,
            created_by=request.user,
            role=role,
            email=request.POST.get("email", ""),
            any_address=request.POST.get("any_address") == "on",
        )
    except services.MembershipError as exc:
        messages.error(request, str(exc))
        return redirect("accounts:org-home")
    link = request.build_absolute_uri(reverse("accounts:invite-accept", args=[issued.plaintext]))
    # Shown once on the next page, like a token: only the digest is stored.
    request.session["new_invite"] = link
    return redirect("accounts:org-home")


@login_required
def invite_accept(request: HttpRequest, key: str) -> HttpResponse:
    invitation = services.invitation_get(key)
    if invitation is None:
        return render(request, "accounts/invite.html", {"invitation": None}, status=404)
    if not services.invitation_may_accept(invitation, request.user):
        # The link reached someone else: it stays open for the person it was sent to.
        context = {"invitation": invitation, "wrong_address": True}
        return render(request, "accounts/invite.html", context, status=403)
    if request.method == "POST":
        try:
            services.invitation_accept(invitation=invitation, user=request.user)
        except services.MembershipError as exc:
            messages.error(request, str(exc))
            return redirect("accounts:org-home")
        choose_org(request, invitation.org)
        return redirect("accounts:org-home")
    return render(request, "accounts/invite.html", {"invitation": invitation})


@login_required
@require_POST
def invite_revoke(request: HttpRequest, invitation_id: int) -> HttpResponse:
    invitation = get_object_or_404(
        Invitation.objects.select_related("org"),
        pk=invitation_id,
        org__in=orgs_of(request.user),
    )
    require_role(invitation.org, request.user, Role.ADMIN)
    services.invitation_revoke(invitation=invitation, actor=actor_of(request))
    return redirect("accounts:org-home")


def _membership_in_my_orgs(request: HttpRequest, membership_id: int) -> Membership:
    """A membership of one of the user's organizations; any other id is a 404."""
    return get_object_or_404(
        Membership.objects.select_related("org", "user"),
        pk=membership_id,
        org__in=orgs_of(request.user),
    )


def _needed_to_change(membership: Membership) -> str:
    """An admin manages members, viewers and admins; only an owner removes or demotes an
    owner (members.member_remove checks it again under its lock)."""
    return Role.OWNER if membership.role == Role.OWNER else Role.ADMIN


@login_required
@require_POST
def member_remove(request: HttpRequest, membership_id: int) -> HttpResponse:
    membership = _membership_in_my_orgs(request, membership_id)
    # Anyone may leave; whoever removes someone else chooses what becomes of the tokens they
    # made: revoked (the default) or reassigned to the remover.
    tokens = members.TokensOf.REVOKE
    if membership.user_id != request.user.pk:
        require_role(membership.org, request.user, _needed_to_change(membership))
        if request.POST.get("tokens") == members.TokensOf.REASSIGN:
            tokens = members.TokensOf.REASSIGN
    try:
        members.member_remove(
            membership=membership,
            actor=actor_of(request),
            by=request.user,
            tokens=tokens,
            reassign_to=request.user,
        )
    except services.MembershipError as exc:
        messages.error(request, str(exc))
    return redirect("accounts:org-home")


@login_required
@require_POST
def member_role(request: HttpRequest, membership_id: int) -> HttpResponse:
    membership = _membership_in_my_orgs(request, membership_id)
    role = request.POST.get("role", "")
    if role not in Role.values:
        messages.error(request, "role: choose admin, member or viewer")
        return redirect("accounts:org-home")
    needed = Role.OWNER if Role.OWNER in (role, membership.role) else Role.ADMIN
    require_role(membership.org, request.user, needed)
    try:
        members.member_set_role(
            membership=membership, role=role, actor=actor_of(request), by=request.user
        )
    except services.MembershipError as exc:
        messages.error(request, str(exc))
    return redirect("accounts:org-home")


@login_required
@require_POST
def ownership_offer(request: HttpRequest, membership_id: int) -> HttpResponse:
    membership = _membership_in_my_orgs(request, membership_id)
    require_role(membership.org, request.user, Role.OWNER)
    try:
        members.ownership_offer(
            membership=membership,
            by=request.user,
            actor=actor_of(request),
            steps_down=request.POST.get("steps_down") == "on",
        )
    except services.MembershipError as exc:
        messages.error(request, str(exc))
    return redirect("accounts:org-home")


def _transfer_of_mine(request: HttpRequest, transfer_id: int) -> OwnershipTransfer:
    """An open offer made by or to the caller; any other id is a 404."""
    mine = Q(offered_to=request.user) | Q(offered_by=request.user)
    return get_object_or_404(
        members.transfers_open(org=None).filter(mine).select_related("org"), pk=transfer_id
    )


@login_required
@require_POST
def ownership_accept(request: HttpRequest, transfer_id: int) -> HttpResponse:
    transfer = _transfer_of_mine(request, transfer_id)
    try:
        members.ownership_accept(transfer=transfer, user=request.user, actor=actor_of(request))
    except services.MembershipError as exc:
        messages.error(request, str(exc))
    return redirect("accounts:org-home")


@login_required
@require_POST
def ownership_decline(request: HttpRequest, transfer_id: int) -> HttpResponse:
    transfer = _transfer_of_mine(request, transfer_id)
    members.ownership_decline(transfer=transfer, by=request.user, actor=actor_of(request))
    return redirect("accounts:org-home")


@login_required
@require_POST
def token_create(request: HttpRequest) -> HttpResponse:
    org = _org_or_403(request, Role.ADMIN)
    name = request.POST.get("name", "").strip()[:100]
    scope = request.POST.get("scope", ApiToken.Scope.WRITE)
    if scope not in ApiToken.Scope.values:
        messages.error(request, "scope: choose write or read")
        return redirect("accounts:org-home")
    issued = services.token_create(
        org=org, name=name, actor=actor_of(request), scope=scope, created_by=request.user
    )
    request.session["new_token"] = issued.plaintext
    return redirect("accounts:org-home")


@login_required
@require_POST
def token_revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    token = get_object_or_404(ApiToken, pk=token_id, org__in=orgs_of(request.user))
    require_role(token.org, request.user, Role.ADMIN)
    services.token_revoke(token=token, actor=actor_of(request))
    return redirect("accounts:org-home")
