"""The site's URL map: pages, the API, the admin and allauth, in one place."""

import sys
from urllib.parse import urlencode

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import include, path, reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views import defaults

from apps.accounts import views as accounts
from apps.accuracy import views as accuracy
from apps.agents import views as agents
from apps.api.api import api
from apps.api.middleware import as_unavailable, unavailable_response
from apps.claims import checker_views
from apps.claims import views as claims
from apps.costs import views as costs
from apps.economics import views as economics
from apps.health import readyz
from apps.jobs import views as jobs
from apps.leaderboard.views import answer, board, compare, embed, pages
from apps.leaderboard.views import run as run_pages
from apps.regressions import views as regressions
from apps.runs import views as runs
from apps.trust import views as trust


def healthz(request: HttpRequest) -> HttpResponse:
    """Liveness for load balancers, and the trivial page bench/pages.py measures against."""
    return HttpResponse("ok", content_type="text/plain")


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500: a failure outside a view (a middleware's session read, say) because the
    database is down is still a 503 with Retry-After; anything else is Django's 500 page."""
    failure = sys.exc_info()[1]
    unavailable = as_unavailable(failure) if failure else None
    if unavailable is not None:
        return unavailable_response(request, unavailable)
    return defaults.server_error(request)


handler500 = server_error


def admin_login(request: HttpRequest) -> HttpResponse:
    """The admin's sign-in is allauth's, like everyone's: Django's own admin form would skip
    allauth's lockout after failed attempts (and its second factor). Staff sign in at
    /accounts/login/ and come back; a signed-in person who is not staff is refused."""
    target = request.GET.get("next", "")
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        target = ""
    target = target or reverse("admin:index")
    if request.user.is_authenticated:
        if request.user.is_active and request.user.is_staff:
            return redirect(target)
        raise PermissionDenied("this account has no access to the admin")
    return redirect(f"{reverse('account_login')}?{urlencode({'next': target})}")


# The whole site's URL map, in one place: a namespace is an (urlpatterns, app_name) pair.
costs_urls = [
    path("", costs.procurement, name="procurement"),
    path("export.csv", costs.export_csv, name="export-csv"),
    path("export.json", costs.export_json, name="export-json"),
    # The claim checker reads its claims from the ledger (apps/claims), under /costs/ still.
    path("claim/", checker_views.claim, name="claim"),
    path("claim/verdict.svg", checker_views.claim_image, name="claim-image"),
    path("profiles/", costs.profile_save, name="profile-save"),
    path("profiles/active/", costs.profile_activate, name="profile-activate"),
    path("saved/", costs.page_save, name="page-save"),
    path("s/<str:slug>/", costs.saved, name="saved"),
    path("s/<str:slug>/delete/", costs.page_delete, name="page-delete"),
]
claims_urls = [
    path("", claims.ledger, name="ledger"),
    path("subscriptions/", claims.subscriptions, name="subscriptions"),
]
economics_urls = [
    path("margin/", economics.margin, name="margin"),
    path("fleet/", economics.fleet, name="fleet"),
    path("first-token/", economics.first_token, name="first-token"),
]
regressions_urls = [
    path("", regressions.regression_list, name="list"),
    path("<int:change_point_id>/", regressions.regression_detail, name="detail"),
    path(
        "<int:change_point_id>/acknowledge/",
        regressions.regression_acknowledge,
        name="acknowledge",
    ),
    path("subscriptions/", regressions.subscription_list, name="subscriptions"),
]
jobs_urls = [
    path("endpoints/", jobs.endpoint_list, name="endpoint-list"),
    path("endpoints/<int:endpoint_id>/run/", jobs.endpoint_run, name="endpoint-run"),
    path("endpoints/<int:endpoint_id>/schedules/", jobs.schedule_add, name="schedule-add"),
    path("schedules/<int:schedule_id>/", jobs.schedule_switch, name="schedule-switch"),
    path("jobs/<int:job_id>/", jobs.job_detail, name="job-detail"),
    path("jobs/<int:job_id>/cancel/", jobs.job_cancel, name="job-cancel"),
    path("jobs/<int:job_id>/retry/", jobs.job_retry, name="job-retry"),
]
accounts_urls = [
    path("", accounts.org_home, name="org-home"),
    path("new/", accounts.org_create, name="org-create"),
    path("<int:org_id>/switch/", accounts.org_switch, name="org-switch"),
    path("invite/", accounts.invite_create, name="invite-create"),
    path("join/<str:key>/", accounts.invite_accept, name="invite-accept"),
    path("invitations/<int:invitation_id>/revoke/", accounts.invite_revoke, name="invite-revoke"),
    path("members/<int:membership_id>/remove/", accounts.member_remove, name="member-remove"),
    path("members/<int:membership_id>/role/", accounts.member_role, name="member-role"),
    path(
        "members/<int:membership_id>/offer-ownership/",
        accounts.ownership_offer,
        name="ownership-offer",
    ),
    path("ownership/<int:transfer_id>/accept/", accounts.ownership_accept, name="ownership-accept"),
    path(
        "ownership/<int:transfer_id>/decline/", accounts.ownership_decline, name="ownership-decline"
    ),
    path("tokens/", accounts.token_create, name="token-create"),
    path("tokens/<int:token_id>/revoke/", accounts.token_revoke, name="token-revoke"),
    # Under /org/ and this namespace since they began here; the views are the runs app's.
    path("runs/<int:run_id>/publish/", runs.run_publish, name="run-publish"),
    path("runs/<int:run_id>/unpublish/", runs.run_unpublish, name="run-unpublish"),
]

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("", board.leaderboard, name="home"),
    path("runs/", runs.run_index, name="run-index"),
    path("audit/", runs.audit_index, name="audit"),
    path("runs/<int:run_id>/", run_pages.run_detail, name="run-detail"),
    path("deployments/<int:deployment_id>/", run_pages.deployment_detail, name="deployment-detail"),
    path("compare/", compare.compare, name="compare"),
    path("answer/", answer.answer_page, name="answer"),
    path("embed/board/", embed.embed_board, name="embed-board"),
    path("embed/compare/", embed.embed_compare, name="embed-compare"),
    path("methodology/", pages.methodology, name="methodology"),
    path("story/glm-5-2/", pages.story_glm, name="story-glm"),
    path("costs/", include((costs_urls, "costs"))),
    path("economics/", include((economics_urls, "economics"))),
    path("regressions/", include((regressions_urls, "regressions"))),
    path("claims/", include((claims_urls, "claims"))),
    path("accuracy/", accuracy.accuracy_index, name="accuracy-index"),
    path("accuracy/compare/", accuracy.accuracy_compare, name="accuracy-compare"),
    path("", include((jobs_urls, "jobs"))),
    path("runs/<int:run_id>/bundle.zip", trust.bundle, name="run-bundle"),
    path("runs/<int:run_id>/propose", trust.propose, name="run-propose"),
    path("data/<str:name>", trust.dump, name="dump"),
    path("staff/reviews/", trust.review_queue, name="review-queue"),
    path("staff/reviews/<int:review_id>", trust.review_decision, name="review-decision"),
    path("accounts/", include("allauth.urls")),
    path("org/", include((accounts_urls, "accounts"))),
    path("api/v1/", api.urls),
    # The MCP server (apps/agents): for assistants, as the API is for programs.
    path("mcp/", agents.mcp_endpoint, name="mcp"),
    path("mcp", agents.mcp_endpoint),  # as assistants' configs often spell it: no redirect
    path("llms.txt", agents.llms, name="llms-txt"),
    path("admin/login/", admin_login, name="admin-login"),
    path("admin/", admin.site.urls),
]
