import sys
from urllib.parse import urlencode

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import include, path, reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views import defaults

from apps.accuracy import views as accuracy
from apps.api.api import api
from apps.api.middleware import as_unavailable, unavailable_response
from apps.health import readyz
from apps.leaderboard.views import board, compare, embed, pages
from apps.leaderboard.views import run as run_pages
from apps.runs import views as runs


def healthz(request: HttpRequest) -> HttpResponse:
    """Liveness for load balancers, and the trivial page bench/pages.py measures against."""
    return HttpResponse("ok", content_type="text/plain")


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500: a failure outside a view (a middleware's session read, say) because the
    database is down is still a 503 with Retry-After; anything else is Django's 500 page."""
    unavailable = as_unavailable(sys.exc_info()[1]) if sys.exc_info()[1] else None
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


urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("", board.leaderboard, name="home"),
    path("runs/", runs.run_index, name="run-index"),
    path("runs/<int:run_id>/", run_pages.run_detail, name="run-detail"),
    path("deployments/<int:deployment_id>/", run_pages.deployment_detail, name="deployment-detail"),
    path("compare/", compare.compare, name="compare"),
    path("embed/board/", embed.embed_board, name="embed-board"),
    path("embed/compare/", embed.embed_compare, name="embed-compare"),
    path("methodology/", pages.methodology, name="methodology"),
    path("story/glm-5-2/", pages.story_glm, name="story-glm"),
    path("costs/", include("apps.costs.urls")),
    path("regressions/", include("apps.regressions.urls")),
    path("accuracy/", accuracy.accuracy_index, name="accuracy-index"),
    path("accuracy/compare/", accuracy.accuracy_compare, name="accuracy-compare"),
    path("", include("apps.jobs.urls")),
    path("", include("apps.trust.urls")),
    path("accounts/", include("allauth.urls")),
    path("org/", include("apps.accounts.urls")),
    path("api/v1/", api.urls),
    path("admin/login/", admin_login, name="admin-login"),
    path("admin/", admin.site.urls),
]
