"""The REST API v1: one NinjaAPI, with a router per domain."""

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, ValidationError

from apps.accounts.ratelimit import RateLimited
from apps.accuracy.api import router as accuracy_router
from apps.api.errors import error_items
from apps.api.middleware import body_too_large
from apps.catalog.api import router as catalog_router
from apps.costs.api import router as costs_router
from apps.imports.api import router as imports_router
from apps.jobs.api import router as jobs_router
from apps.runs.api import router as runs_router
from apps.runs.services import IdempotencyConflict
from workers.results import DocumentError

api = NinjaAPI(
    title="inferboard API",
    version="1",
    description=(
        "Submit result documents (`inferboard.run/v1`) with a Bearer token, and read every "
        "run, point, accelerator and scenario the pages show. Request bodies are limited to "
        "API_MAX_BODY_BYTES (64 MiB by default); larger ones get 413."
    ),
    urls_namespace="api",
)
api.add_router("/runs", runs_router)
api.add_router("/imports", imports_router)
api.add_router("/costs", costs_router)
api.add_router("/accuracy", accuracy_router)
api.add_router("/", catalog_router)
api.add_router("/", jobs_router)


@api.exception_handler(ValidationError)
def validation_failed(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    return api.create_response(request, {"detail": error_items(exc.errors)}, status=422)


@api.exception_handler(DocumentError)
def document_invalid(request: HttpRequest, exc: DocumentError) -> HttpResponse:
    detail = [{"path": path, "message": message} for path, message in exc.errors]
    return api.create_response(request, {"detail": detail}, status=422)


@api.exception_handler(AuthenticationError)
def unauthorized(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    message = getattr(exc, "message", "") or "a valid Bearer token is required"
    response = api.create_response(request, {"detail": message}, status=401)
    response["WWW-Authenticate"] = "Bearer"
    return response


@api.exception_handler(IdempotencyConflict)
def idempotency_conflict(request: HttpRequest, exc: IdempotencyConflict) -> HttpResponse:
    detail = [{"path": "idempotency_key", "message": "already used by another organization"}]
    return api.create_response(request, {"detail": detail}, status=409)


@api.exception_handler(RateLimited)
def rate_limited(request: HttpRequest, exc: RateLimited) -> HttpResponse:
    response = api.create_response(request, {"detail": str(exc)}, status=429)
    response["Retry-After"] = str(exc.retry_after)
    return response


@api.exception_handler(RequestDataTooBig)
def too_big(request: HttpRequest, exc: RequestDataTooBig) -> HttpResponse:
    return body_too_large()
