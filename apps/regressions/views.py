"""The regressions page (change points, filterable), one change point, acknowledging it,
and an organization's alert subscriptions with their delivery log."""

from __future__ import annotations

import secrets

from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from apps.accounts.models import Organization, Role
from apps.accounts.scoping import org_with_role, viewer_org
from apps.htmx import page_or_partial, paged
from apps.regressions import selectors, services
from apps.regressions.forms import RegressionListQuery, SubscriptionForm
from apps.regressions.models import METRICS, Subscription

PAGE_SIZE = 50


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value else None
    except ValueError:
        return None


def regression_list(request: HttpRequest) -> HttpResponse:
    """Change points the viewer may see, narrowed by the query's filters, 50 a page; HTMX
    requests get only the results partial."""
    org = viewer_org(request)
    query = RegressionListQuery(request.GET)
    filters = selectors.Filters(**query.values())
    points = selectors.change_point_list(org=org, filters=filters)
    listed = paged(points, request.GET, PAGE_SIZE)
    context = {
        **listed,
        "points": listed["items"],
        "filters": filters,
        "choices": selectors.filter_choices(org=org),
        "metrics": [(m[0], m[1]) for m in METRICS],
        "problems": query.problems(),
    }
    return page_or_partial(request, "regressions/list.html", "results", context)


def regression_detail(request: HttpRequest, change_point_id: int) -> HttpResponse:
    org = viewer_org(request)
    cp = selectors.change_point_get(change_point_id=change_point_id, org=org)
    if cp is None:
        raise Http404("No such change point")
    acknowledged = org is not None and cp.acknowledgements.filter(org=org).exists()
    context = {
        "cp": cp,
        "acknowledged": acknowledged,
        "may_acknowledge": org_with_role(request, Role.MEMBER) is not None,
    }
    return render(request, "regressions/detail.html", context)


@require_POST
def regression_acknowledge(request: HttpRequest, change_point_id: int) -> HttpResponse:
    org = org_with_role(request, Role.MEMBER)
    if org is None:
        return HttpResponse("Sign in as a member of an organization to acknowledge.", status=403)
    cp = selectors.change_point_get(change_point_id=change_point_id, org=org)
    if cp is None:
        raise Http404("No such change point")
    services.change_point_acknowledge(change_point=cp, org=org, user=request.user)
    return redirect("regressions:detail", change_point_id=cp.pk)


@require_http_methods(["GET", "POST"])
def subscription_list(request: HttpRequest) -> HttpResponse:
    """An organization's subscriptions (admins add and remove them), and each one's alerts
    with every delivery attempt."""
    org = org_with_role(request, Role.VIEWER)
    if org is None:
        return HttpResponse("Sign in to see your organization's alerts.", status=403)
    may_edit = org_with_role(request, Role.ADMIN) is not None
    form = SubscriptionForm(org=org)
    status = 200
    created_secret = ""
    if request.method == "POST":
        if not may_edit:
            return HttpResponse("Subscriptions need the admin role.", status=403)
        if request.POST.get("delete"):
            Subscription.objects.filter(org=org, pk=_int(request.POST["delete"])).delete()
            return redirect("regressions:subscriptions")
        form = SubscriptionForm(request.POST, org=org)
        if form.is_valid():
            with transaction.atomic():
                # The organization's row, locked while the budget is counted again: two adds
                # at once cannot both pass it (the form's check resolved the webhook's host
                # first, outside the lock).
                Organization.objects.select_for_update().filter(pk=org.pk).first()
                if refused := form.over_budget():
                    form.add_error(None, refused)
                else:
                    subscription = form.save(commit=False)
                    subscription.org = org
                    if subscription.channel == Subscription.Channel.WEBHOOK:
                        subscription.secret = secrets.token_urlsafe(32)
                        created_secret = subscription.secret
                    subscription.save()
                    form = SubscriptionForm(org=org)
        if form.is_bound and form.errors:
            status = 400
    context = {
        "org": org,
        "subscriptions": selectors.subscriptions_of(org=org),
        "form": form,
        "may_edit": may_edit,
        "created_secret": created_secret,
    }
    return render(request, "regressions/subscriptions.html", context, status=status)
