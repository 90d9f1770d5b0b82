"""What the API answers before or around a view: a body over API_MAX_BODY_BYTES (413) and a
database or broker that is down (503 with Retry-After); and the site's own 404 and 403 pages."""

import logging
from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.views.defaults import page_not_found, permission_denied

from apps.api_errors import DATABASE_DOWN, ServiceUnavailable, database_unavailable

log = logging.getLogger(__name__)


def body_too_large(size: int | None = None) -> JsonResponse:
    limit = settings.API_MAX_BODY_BYTES
    told = f"{size} bytes" if size is not None else "too large"
    return JsonResponse(
        {"detail": f"request body is {told}; the limit is {limit} bytes (API_MAX_BODY_BYTES)"},
        status=413,
    )


class BodySizeLimitMiddleware:
    """Answer 413 before reading a body whose declared length is over the limit."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            declared = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return JsonResponse({"detail": "Content-Length is not a number"}, status=400)
        if declared > settings.API_MAX_BODY_BYTES:
            return body_too_large(declared)
        if "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower() and not declared:
            # WSGI hands Django no chunked body: it would be read as empty, and an empty
            # document is not what the client sent.
            return JsonResponse(
                {"detail": "send the body with a Content-Length (chunked bodies are not read)"},
                status=411,
            )
        return self.get_response(request)


def unavailable_response(request: HttpRequest, exc: ServiceUnavailable) -> HttpResponse:
    """503 with Retry-After: JSON naming the part for the API, a plain page for people (built
    without the request, so it needs no session and no database)."""
    log.warning("%s %s: 503, %s unavailable: %s", request.method, request.path, exc.part, exc)
    if request.path.startswith("/api/"):
        detail = [{"path": exc.part, "message": exc.message}]
        response: HttpResponse = JsonResponse({"detail": detail}, status=503)
    else:
        context = {
            "message": exc.message[:1].upper() + exc.message[1:] + ".",
            "retry_after": exc.retry_after,
        }
        response = HttpResponse(render_to_string("503.html", context), status=503)
    response["Retry-After"] = str(exc.retry_after)
    return response


def as_unavailable(exc: BaseException) -> ServiceUnavailable | None:
    if isinstance(exc, ServiceUnavailable):
        return exc
    if isinstance(exc, DATABASE_DOWN):
        return database_unavailable()
    return None


class ServiceUnavailableMiddleware:
    """A view that fails because the database (or another part) is down answers 503 with
    Retry-After, quickly (the connect and pool timeouts are seconds, apps/settings.py), in
    place of a 500 and a traceback. Failures outside views reach apps.urls.server_error."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        unavailable = as_unavailable(exception)
        return unavailable_response(request, unavailable) if unavailable else None


class SiteNotFoundMiddleware:
    """With DEBUG on (how the local demo runs), a page a view cannot find (`/runs/999/`) is
    still the site's own 404 page, not Django's technical page for developers. An address no
    URL pattern matches keeps Django's technical page under DEBUG: it lists the patterns,
    which is what a developer mistyping a route wants."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if settings.DEBUG and isinstance(exception, Http404):
            return page_not_found(request, exception)
        return None


class SiteForbiddenMiddleware:
    """A view that refuses the visitor (PermissionDenied: `/staff/reviews/` for someone who does
    not review) answers the site's styled 403 page (templates/403.html), and the refusal is
    logged as the one "Forbidden" line every 4xx gets, not as a warning with a traceback: a
    refusal is the view working, not a fault to debug."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, PermissionDenied):
            return permission_denied(request, exception)
        return None
