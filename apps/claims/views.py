"""/claims/: the ledger of published claims, each re-priced under the dated price sets and
checked against the stored runs; and an organization's subscriptions to its flips.

Parse (`prices_as_of`), read the ledger (apps/claims/selectors.py), render."""

from __future__ import annotations

import secrets

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from apps.accounts.models import Role
from apps.accounts.scoping import org_with_role, viewer_org
from apps.claims.forms import ClaimSubscriptionForm
from apps.claims.models import ClaimSubscription
from apps.claims.selectors import ledger_entries
from apps.costs.prices import asked_price_set


def ledger(request: HttpRequest) -> HttpResponse:
    """Every claim: its source and basis, its verdict under its own date's prices and under
    the newest set (or the set in force on `prices_as_of`), under each tier, the stored runs
    that bear on it, and the date it stopped holding."""
    asked = asked_price_set(request.GET)
    context = {
        "entries": ledger_entries(org=viewer_org(request), prices_as_of=asked.value),
        "price_set": asked.price_set,
        "price_problem": asked.problem,
        "prices_as_of": asked.value,
    }
    return render(request, "claims/ledger.html", context)


def subscriptions(request: HttpRequest) -> HttpResponse:
    """An organization's subscriptions to claim flips (admins add and remove them), with each
    one's alerts."""
    org = org_with_role(request, Role.VIEWER)
    if org is None:
        return HttpResponse("Sign in to see your organization's claim alerts.", status=403)
    may_edit = org_with_role(request, Role.ADMIN) is not None
    form = ClaimSubscriptionForm(org=org)
    status, created_secret = 200, ""
    if request.method == "POST":
        if not may_edit:
            return HttpResponse("Subscriptions need the admin role.", status=403)
        if request.POST.get("delete", "").isdigit():
            ClaimSubscription.objects.filter(org=org, pk=int(request.POST["delete"])).delete()
            return redirect("claims:subscriptions")
        form = ClaimSubscriptionForm(request.POST, org=org)
        if form.is_valid():
            subscription = form.save(commit=False)
            subscription.org = org
            if subscription.channel == ClaimSubscription.Channel.WEBHOOK:
                subscription.secret = created_secret = secrets.token_urlsafe(32)
            subscription.save()
            form = ClaimSubscriptionForm(org=org)
        else:
            status = 400
    context = {
        "org": org,
        "subscriptions": ClaimSubscription.objects.filter(org=org)
        .select_related("claim")
        .prefetch_related("alerts__flip"),
        "form": form,
        "may_edit": may_edit,
        "created_secret": created_secret,
    }
    return render(request, "claims/subscriptions.html", context, status=status)
