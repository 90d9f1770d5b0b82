import sys

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.urls import include, path
from django.views import defaults

from apps.accuracy import views as accuracy
from apps.api.api import api
from apps.api.middleware import as_unavailable, unavailable_response
from apps.health import readyz
from apps.leaderboard import views as board
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

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("", board.leaderboard, name="home"),
    path("runs/", runs.run_index, name="run-index"),
    path("runs/<int:run_id>/", board.run_detail, name="run-detail"),
    path("deployments/<int:deployment_id>/", board.deployment_detail, name="deployment-detail"),
    path("compare/", board.compare, name="compare"),
    path("embed/board/", board.embed_board, name="embed-board"),
    path("embed/compare/", board.embed_compare, name="embed-compare"),
    path("methodology/", board.methodology, name="methodology"),
    path("story/glm-5-2/", board.story_glm, name="story-glm"),
    path("costs/", include("apps.costs.urls")),
    path("accuracy/", accuracy.accuracy_index, name="accuracy-index"),
    path("accuracy/compare/", accuracy.accuracy_compare, name="accuracy-compare"),
    path("", include("apps.jobs.urls")),
    path("accounts/", include("allauth.urls")),
    path("org/", include("apps.accounts.urls")),
    path("api/v1/", api.urls),
    path("admin/", admin.site.urls),
]
