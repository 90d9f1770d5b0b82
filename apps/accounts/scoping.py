"""The one place that says who may see and do what in an organization.

Pages and the API call these helpers instead of checking roles or DEBUG inline: a page
gets the signed-in person's current organization from `current_org`, an API call gets its
token's organization, and both go through `require_role` before acting.
"""

from typing import Any

from django.core.exceptions import PermissionDenied
from django.db.models import Q, QuerySet
from django.http import HttpRequest

from apps.accounts.models import Membership, Organization, Role

# Most to least power: an owner may do everything an admin may, and so on.
ROLE_ORDER = [Role.OWNER, Role.ADMIN, Role.MEMBER, Role.VIEWER]
SESSION_ORG = "inferboard_org"
# What a run submitted with a token is unless the submit asks otherwise (`?visibility=`, the
# runs API): the token page and the API docs quote this one value.
DEFAULT_VISIBILITY = "public"


def visible_to(org: Organization | None, *, via: str = "") -> Q:
    """What a caller may see of rows that are public or an organization's own (runs, their
    tallies): the public ones and its organization's. `via` reaches those rows through a
    relation ("run__" from an accuracy result, "runs__" from a scenario)."""
    visible = Q(**{f"{via}is_public": True})
    if org is not None:
        visible |= Q(**{f"{via}org": org})
    return visible


def role_allows(role: str, needed: str) -> bool:
    return ROLE_ORDER.index(Role(role)) <= ROLE_ORDER.index(Role(needed))


def membership_of(org: Organization | None, user: Any) -> Membership | None:
    if org is None or user is None or not user.is_authenticated:
        return None
    return Membership.objects.filter(org=org, user=user).first()


def require_role(org: Organization | None, user: Any, needed: str) -> Membership:
    """The caller's membership when it carries at least `needed`; PermissionDenied otherwise."""
    membership = membership_of(org, user)
    if membership is None or not role_allows(membership.role, needed):
        raise PermissionDenied(f"this needs the {needed} role in the organization")
    return membership


def org_with_role(request: HttpRequest, needed: str) -> Organization | None:
    """The signed-in person's current organization where they hold at least `needed`; None
    otherwise (a page then refuses, naming what it needs)."""
    org = current_org(request)
    try:
        require_role(org, request.user, needed)
    except PermissionDenied:
        return None
    return org


def orgs_of(user: Any) -> QuerySet[Organization]:
    if user is None or not user.is_authenticated:
        return Organization.objects.none()
    return Organization.objects.filter(memberships__user=user).order_by("name", "id")


def current_org(request: HttpRequest) -> Organization | None:
    """The signed-in person's chosen organization (first one when none chosen); None else."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return None
    orgs = orgs_of(user)
    chosen = request.session.get(SESSION_ORG)
    if chosen is not None:
        org = orgs.filter(pk=chosen).first()
        if org is not None:
            return org
    return orgs.first()


def choose_org(request: HttpRequest, org: Organization) -> None:
    require_role(org, request.user, Role.VIEWER)
    request.session[SESSION_ORG] = org.pk


def actor_of(request: HttpRequest) -> str:
    """How the audit trail names the caller: the person's email, or the token's prefix."""
    auth = getattr(request, "auth", None)
    if auth is not None and hasattr(auth, "prefix"):
        return f"token {auth.prefix}"
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return user.email or user.get_username()
    return "anonymous"


def viewer_org(request: HttpRequest) -> Organization | None:
    """Whose private runs a page shows: the signed-in person's current organization, unless
    they switched private runs off (`?private=0`); None for anonymous visitors."""
    if request.GET.get("private") == "0":
        return None
    return current_org(request)


def may_publish(request: HttpRequest, run: Any) -> bool:
    membership = membership_of(run.org, getattr(request, "user", None))
    return membership is not None and role_allows(membership.role, Role.ADMIN)


def member_addresses(org: Organization) -> set[str]:
    """The verified email addresses of the organization's members, lower-cased: where its
    alerts may be mailed, so a subscription cannot turn the site into a mailer for outsiders."""
    from allauth.account.models import EmailAddress

    rows = EmailAddress.objects.filter(verified=True, user__memberships__org=org)
    return {address.lower() for address in rows.values_list("email", flat=True)}
