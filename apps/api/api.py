"""The REST API v1: one NinjaAPI, with a router per domain."""

import json
import logging

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.db import DataError, InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from django.http.multipartparser import MultiPartParserError
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, Throttled, ValidationError
from ninja.parser import Parser

from apps.accounts.ratelimit import RateLimited, WriteThrottle
from apps.accounts.scoping import DEFAULT_VISIBILITY
from apps.accuracy.api import router as accuracy_router
from apps.api.middleware import body_too_large, unavailable_response
from apps.api_errors import (
    ServiceUnavailable,
    database_unavailable,
    error_body,
    error_items,
    errors_json_schema,
)
from apps.catalog.api import router as catalog_router
from apps.claims.api import router as claims_router
from apps.costs.api import router as costs_router
from apps.costs.api.accelerators import router as accelerators_router
from apps.costs.api.answer import router as answer_router
from apps.economics.api import router as economics_router
from apps.errors import FieldRefused
from apps.imports.api import router as imports_router
from apps.jobs.allowlist import EndpointRefused
from apps.jobs.api import router as jobs_router
from apps.jobs.broker import BrokerUnavailable
from apps.jobs.crypto import CredentialError
from apps.runs.api import audit_router
from apps.runs.api import router as runs_router
from apps.runs.services import IdempotencyConflict, JobBindingRefused
from workers.importers import ImportFailure
from workers.results import DocumentError, DuplicateKey, unique_keys

# Answers any operation can give, whatever its own code declares: a body that is not JSON
# (400), a missing, malformed or revoked token where one is given or needed (401), input that
# breaks the schema or a limit (422), a body over API_MAX_BODY_BYTES (413).
_ERROR_BODY = errors_json_schema()
_COMMON_ERRORS = {
    "400": "the body is not JSON (or not the declared form)",
    "401": "a token was given (or is required) and is missing, malformed or revoked",
    "422": "a parameter or the body breaks the schema or a limit; `path` names it",
}


class InferboardApi(NinjaAPI):
    def get_openapi_operation_id(self, operation) -> str:
        """apps_<domain>_api_<view> wherever in the domain's api the view lives: an api split
        into a package of topics (apps/costs/api/) keeps the ids clients were generated from."""
        domain = operation.view_func.__module__.split(".")[1]
        return f"apps_{domain}_api_{operation.view_func.__name__}"

    def get_openapi_schema(self, *, path_prefix=None, path_params=None):
        schema = super().get_openapi_schema(path_prefix=path_prefix, path_params=path_params)
        for operations in schema.get("paths", {}).values():
            for method, operation in operations.items():
                errors = dict(_COMMON_ERRORS)
                if method in ("post", "put", "patch"):
                    errors["413"] = "the body is over API_MAX_BODY_BYTES"
                if method in ("post", "put", "patch", "delete"):
                    # Every write operation passes WriteThrottle (apps/accounts/ratelimit.py).
                    errors["429"] = "past a write limit (RATE_LIMIT_*); see Retry-After"
                # ninja keys responses by int, OpenAPI by string: both kinds in one dict
                # serialise as a repeated JSON key, which Swagger refuses to parse.
                responses = {str(status): r for status, r in operation.get("responses", {}).items()}
                for status, description in errors.items():
                    responses.setdefault(
                        status,
                        {
                            "description": description,
                            "content": {"application/json": {"schema": _ERROR_BODY}},
                        },
                    )
                operation["responses"] = responses
        _storable_inputs(schema)
        return schema


# What the database cannot store, stated for every string and integer a request sends
# (`_storable`): no NUL character in text (the pattern the result document's labels use;
# apps.api_params.Input refuses one in any text field), no integer past 64 bits.
NO_NUL = r"^[^\x00]*$"
INT64 = 2**63 - 1


class StrictJsonParser(Parser):
    """JSON bodies where a key given twice in one object is an error (422 naming the key),
    not a silent last-one-wins."""

    def parse_body(self, request: HttpRequest):
        return json.loads(request.body, object_pairs_hook=unique_keys)


def _storable_inputs(schema: dict) -> None:
    """`_storable` over what requests send: every operation's parameters and body, and the
    components they refer to (the answers keep their own schemas)."""
    components = schema.get("components", {}).get("schemas", {})
    inputs = [
        part
        for operations in schema.get("paths", {}).values()
        for operation in operations.values()
        for part in (operation.get("parameters", []), operation.get("requestBody", {}))
    ]
    seen: set[str] = set()
    todo = list(inputs)
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            ref = node.get("$ref", "")
            name = ref.rsplit("/", 1)[-1] if ref.startswith("#/components/schemas/") else ""
            if name and name not in seen and name in components:
                seen.add(name)
                todo.append(components[name])
            todo.extend(node.values())
        elif isinstance(node, list):
            todo.extend(node)
    _storable(inputs)
    _storable([components[name] for name in seen])
    components[FREE_JSON] = _free_json()


# Free-form JSON (a job's options, a member's part, a document's environment.extra), stated
# as what the API stores of it: text without NUL at any depth.
FREE_JSON = "FreeJson"


def _free_json() -> dict:
    value = {"$ref": f"#/components/schemas/{FREE_JSON}"}
    return {
        "anyOf": [
            {"type": "string", "pattern": NO_NUL},
            {"type": "number"},
            {"type": "boolean"},
            {"type": "null"},
            {"type": "array", "items": value},
            {
                "type": "object",
                "propertyNames": {"pattern": NO_NUL},
                "additionalProperties": value,
            },
        ]
    }


def _storable(node: object) -> None:
    """Every string and integer schema of the document says what the API refuses:
    a string a pattern without NUL (where it has no pattern, format or set of values of its
    own), an object's free keys the same, an integer a 64-bit range (where it states none);
    and an object whose keys must match a pattern refuses other keys, as pydantic does."""
    if isinstance(node, list):
        for item in node:
            _storable(item)
        return
    if not isinstance(node, dict):
        return
    kind = node.get("type")
    if kind == "string" and not {"pattern", "format", "enum", "const"} & node.keys():
        node["pattern"] = NO_NUL
    if kind == "integer":
        node.setdefault("minimum", -INT64)
        node.setdefault("maximum", INT64)
    if kind == "object" and "patternProperties" in node:
        # pydantic's dict with a constrained key: a key matching no pattern is refused.
        node.setdefault("additionalProperties", False)
    if kind == "object" and node.get("additionalProperties") in (True, {}):
        node["additionalProperties"] = {"$ref": f"#/components/schemas/{FREE_JSON}"}
    if kind == "object" and node.get("additionalProperties") not in (None, False):
        node.setdefault("propertyNames", {"pattern": NO_NUL})
    for value in node.values():
        _storable(value)


api = InferboardApi(
    title="inferboard API",
    version="1",
    description=(
        f"Runs submitted here are **{DEFAULT_VISIBILITY}** unless `visibility=private` is "
        "given (POST /api/v1/runs?visibility=private: the token's organization only). "
        "Submit result documents (`inferboard.run/v1`) with a Bearer token, and read every "
        "run, point, accelerator and scenario the pages show. Request bodies are limited to "
        "API_MAX_BODY_BYTES (64 MiB by default); larger ones get 413."
    ),
    urls_namespace="api",
    parser=StrictJsonParser(),
    # Every write operation is rate-limited; a route may name its own kind, never none.
    throttle=[WriteThrottle()],
)
api.add_router("/runs", runs_router)
api.add_router("/audit", audit_router)
api.add_router("/imports", imports_router)
api.add_router("/costs", costs_router)
api.add_router("/compare", answer_router)
api.add_router("/economics", economics_router)
api.add_router("/accuracy", accuracy_router)
api.add_router("/", catalog_router)
api.add_router("/", accelerators_router)
api.add_router("/", claims_router)
api.add_router("/", jobs_router)


@api.exception_handler(ValidationError)
def validation_failed(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    return api.create_response(request, {"detail": error_items(exc.errors)}, status=422)


@api.exception_handler(DocumentError)
def document_invalid(request: HttpRequest, exc: DocumentError) -> HttpResponse:
    detail = [{"path": path, "message": message} for path, message in exc.errors]
    return api.create_response(request, {"detail": detail}, status=422)


def _refused(request: HttpRequest, status: int, path: str, message: str) -> HttpResponse:
    """The one error body naming what is wrong (apps.api_errors.Errors)."""
    return api.create_response(request, error_body(path, message), status=status)


def _said(request: HttpRequest, status: int, sentence: str) -> HttpResponse:
    """The error body of one sentence (a 401, a 429, a 400 about the request as a whole)."""
    return api.create_response(request, {"detail": sentence}, status=status)


@api.exception_handler(FieldRefused)
def field_refused(request: HttpRequest, exc: FieldRefused) -> HttpResponse:
    """A service refused an input, naming the field: a cost formula (a price at the edge of
    float range, a tier no accelerator has), a job, endpoint, pool or schedule as asked. 422,
    or the error's own status (JobConflict: 409, a taken name, a job not retryable)."""
    return _refused(request, exc.status, exc.field, exc.message)


@api.exception_handler(ImportFailure)
def import_refused(request: HttpRequest, exc: ImportFailure) -> HttpResponse:
    """A peer tool's file (or the facts given with it) that cannot become a result: nothing
    stored. Its message names the row and field; the path is the upload's part."""
    return _refused(request, 422, "file", str(exc))


@api.exception_handler(EndpointRefused)
def endpoint_refused(request: HttpRequest, exc: EndpointRefused) -> HttpResponse:
    """A URL outside the allowlist: nothing stored, nothing sent."""
    return _refused(request, 422, "url", str(exc))


@api.exception_handler(CredentialError)
def credential_refused(request: HttpRequest, exc: CredentialError) -> HttpResponse:
    return _refused(request, 422, "api_key", str(exc))


@api.exception_handler(BrokerUnavailable)
def broker_down(request: HttpRequest, exc: BrokerUnavailable) -> HttpResponse:
    # 503 with Retry-After; the job is stored as failed and can be retried.
    return unavailable(
        request, ServiceUnavailable("broker", f"job {exc} failed: the broker is unreachable")
    )


@api.exception_handler(AuthenticationError)
def unauthorized(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    message = getattr(exc, "message", "") or "a valid Bearer token is required"
    response = _said(request, 401, message)
    response["WWW-Authenticate"] = "Bearer"
    return response


@api.exception_handler(IdempotencyConflict)
def idempotency_conflict(request: HttpRequest, exc: IdempotencyConflict) -> HttpResponse:
    return _refused(request, 409, "idempotency_key", "already used by another organization")


@api.exception_handler(JobBindingRefused)
def job_binding_refused(request: HttpRequest, exc: JobBindingRefused) -> HttpResponse:
    # Refused rather than stored as submitted: the sender claimed a job, and a claim that
    # does not hold is an error to see, not a run to keep under another origin.
    return _refused(
        request,
        403,
        "X-Inferboard-Job-Secret",
        "this document is not the job's it claims (idempotency_key, organization or secret "
        "do not match)",
    )


@api.exception_handler(RateLimited)
def rate_limited(request: HttpRequest, exc: RateLimited) -> HttpResponse:
    response = _said(request, 429, str(exc))
    response["Retry-After"] = str(exc.retry_after)
    return response


@api.exception_handler(Throttled)
def throttled(request: HttpRequest, exc: Throttled) -> HttpResponse:
    # WriteThrottle keeps the refusal on the request: its scope and its Retry-After.
    limited = getattr(request, "rate_limited", None) or RateLimited("client", 60)
    return rate_limited(request, limited)


@api.exception_handler(RequestDataTooBig)
def too_big(request: HttpRequest, exc: RequestDataTooBig) -> HttpResponse:
    return body_too_large()


@api.exception_handler(HttpError)
def http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    if isinstance(exc.__cause__, DuplicateKey):
        # ninja turns any failure to parse a body into a 400; a repeated key is a 422 naming it.
        message = "appears more than once in one object (duplicate key)"
        return _refused(request, 422, exc.__cause__.key, message)
    return _said(request, exc.status_code, str(exc))


@api.exception_handler(TooManyFieldsSent)
@api.exception_handler(TooManyFilesSent)
def too_many_parts(request: HttpRequest, exc: Exception) -> HttpResponse:
    # Django's own limits (DATA_UPLOAD_MAX_NUMBER_FIELDS, _FILES) on a query string or a
    # multipart body: the client's mistake, said as such, with no traceback in the log.
    what = "files" if isinstance(exc, TooManyFilesSent) else "parameters or fields"
    limit = (
        settings.DATA_UPLOAD_MAX_NUMBER_FILES
        if isinstance(exc, TooManyFilesSent)
        else settings.DATA_UPLOAD_MAX_NUMBER_FIELDS
    )
    return _said(request, 400, f"too many {what} in the request (at most {limit})")


@api.exception_handler(MultiPartParserError)
def multipart_malformed(request: HttpRequest, exc: MultiPartParserError) -> HttpResponse:
    return _said(request, 400, f"malformed multipart body: {exc}")


@api.exception_handler(DataError)
def out_of_range(request: HttpRequest, exc: DataError) -> HttpResponse:
    # A value the database cannot hold (an id beyond 64 bits) names nothing that exists.
    return _refused(request, 422, "(request)", "a value is out of range")


@api.exception_handler(ServiceUnavailable)
def unavailable(request: HttpRequest, exc: ServiceUnavailable) -> HttpResponse:
    return unavailable_response(request, exc)


@api.exception_handler(OperationalError)
@api.exception_handler(InterfaceError)
def database_down(request: HttpRequest, exc: Exception) -> HttpResponse:
    return unavailable_response(request, database_unavailable())


@api.exception_handler(Exception)
def server_error(request: HttpRequest, exc: Exception) -> HttpResponse:
    # API clients get JSON even when the server fails, never Django's HTML error page.
    logging.getLogger("django.request").error(
        "Internal Server Error: %s", request.path, exc_info=exc
    )
    return _said(request, 500, "internal server error")
