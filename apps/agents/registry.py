"""What the MCP server serves, each one function: `@tool` and `@resource` register it, and the
server (apps/agents/server.py) runs it as the caller, the way the REST API runs its views.

A tool is a plain synchronous function `fn(caller, ...)` that calls the service or selector a
page uses and returns a pydantic model (its output schema). Its arguments are its own
parameters, or the fields of a schema the API already reads (`arguments=`), so a question
asked here takes the API's names, bounds and defaults. Whatever it raises becomes the error the
REST API answers for the same input, as a tool error: the API's own exception handlers
(apps/api/api.py) write the body, so a status, a field path and a message read the same here
and there, and nothing of a traceback reaches the caller.
"""

from __future__ import annotations

import copy
import inspect
import json
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections
from django.http import HttpRequest
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from ninja.errors import AuthenticationError
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from apps.accounts.auth import require_write_scope
from apps.accounts.models import ApiToken, Organization
from apps.accounts.ratelimit import write_limit
from apps.accounts.services import token_authenticate
from apps.api.api import api
from apps.api.middleware import as_unavailable
from apps.api_errors import error_items


@dataclass(frozen=True)
class Caller:
    """Who asks: an API token (or none: public data only) and where links should point."""

    token: ApiToken | None = None
    # The HTTP request the call came in (None over stdio): the API's handlers render with it.
    request: HttpRequest | None = None
    base_url: str = ""
    # Over stdio, the token as given (INFERBOARD_TOKEN): checked again on every call, so a
    # token revoked while the server runs stops working as it does on the API.
    token_text: str = ""

    def checked(self) -> Caller:
        if not self.token_text:
            return self
        token = token_authenticate(self.token_text)
        if token is None:
            raise AuthenticationError(message="unknown or revoked token")
        return replace(self, token=token)

    @property
    def org(self) -> Organization | None:
        return self.token.org if self.token is not None else None

    def url(self, path: str) -> str:
        """An absolute link: a tool result is read away from the site, by an assistant."""
        return f"{self.base_url.rstrip('/')}{path}"


# Set for each HTTP request by apps/agents/views.py, and once by `manage.py mcp` (stdio).
CALLER: ContextVar[Caller | None] = ContextVar("mcp_caller", default=None)


def current_caller() -> Caller:
    found = CALLER.get()
    return found if found is not None else Caller(base_url=settings.INFERBOARD_PUBLIC_URL)


class Refused(Exception):
    """A tool's refusal that no API error class says (a page's form's problems): the status
    the API answers for it and its error items."""

    def __init__(self, status: int, detail: list[dict[str, str]] | str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


@dataclass(frozen=True)
class ToolSpec:
    function: Callable[..., BaseModel]
    name: str
    title: str
    # The tool's arguments are this schema's fields (by their API names); None: its own.
    arguments: type[BaseModel] | None
    # A write: a token with the write scope, counted against the API's write limits.
    writes: bool

    def signature(self) -> inspect.Signature:
        own = inspect.signature(self.function, eval_str=True)
        if self.arguments is None:
            parameters = [p for name, p in own.parameters.items() if name != "caller"]
        else:
            parameters = [
                _parameter(name, field) for name, field in self.arguments.model_fields.items()
            ]
        return inspect.Signature(parameters, return_annotation=own.return_annotation)

    @property
    def annotations(self) -> ToolAnnotations:
        return ToolAnnotations(
            title=self.title,
            read_only_hint=not self.writes,
            destructive_hint=False,
            idempotent_hint=True,  # a write here is keyed by its idempotency_key
            open_world_hint=False,
        )


@dataclass(frozen=True)
class ResourceSpec:
    function: Callable[[Caller], str]
    uri: str
    name: str
    mime_type: str


TOOLS: list[ToolSpec] = []
RESOURCES: list[ResourceSpec] = []


def tool(
    *, title: str, arguments: type[BaseModel] | None = None, writes: bool = False
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register `fn(caller, ...)` as a tool named as the function; its docstring describes it."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        TOOLS.append(ToolSpec(fn, fn.__name__, title, arguments, writes))
        return fn

    return register


def resource(
    uri: str, *, mime_type: str
) -> Callable[[Callable[[Caller], str]], Callable[[Caller], str]]:
    """Register `fn(caller) -> str` as a resource at `uri`; its docstring describes it."""

    def register(fn: Callable[[Caller], str]) -> Callable[[Caller], str]:
        RESOURCES.append(ResourceSpec(fn, uri, fn.__name__, mime_type))
        return fn

    return register


def _parameter(name: str, field: FieldInfo) -> inspect.Parameter:
    """A schema's field as a tool parameter: its API name (alias), type, bounds, default and
    help, all in the field's own FieldInfo (the SDK builds its argument model from these)."""
    return inspect.Parameter(
        field.alias or name,
        inspect.Parameter.KEYWORD_ONLY,
        annotation=field.annotation,
        default=copy.copy(field),
    )


def as_async(spec: ToolSpec) -> Callable[..., Any]:
    """The function the SDK registers: its signature is the tool's arguments, and it runs the
    tool where Django runs a view's synchronous code (asgiref's thread for this request)."""

    async def call(**arguments: Any) -> Any:
        return await sync_to_async(run, thread_sensitive=True)(spec, arguments, current_caller())

    call.__name__ = spec.name
    call.__doc__ = spec.function.__doc__
    call.__signature__ = spec.signature()  # type: ignore[attr-defined]
    return call


def run(spec: ToolSpec, arguments: dict[str, Any], caller: Caller) -> Any:
    """One tool call: a result model, or a tool error with the API's status and body."""
    if caller.request is None:
        close_old_connections()  # stdio serves for hours; no request cycle closes them
    try:
        caller = caller.checked()
        if spec.writes:
            may_write(caller)
        if spec.arguments is None:
            return spec.function(caller, **arguments)
        try:
            asked = spec.arguments.model_validate(arguments)
        except ValidationError as exc:
            return refusal(422, {"detail": error_items([dict(e) for e in exc.errors()])})
        return spec.function(caller, asked)
    except Refused as exc:
        return refusal(exc.status, {"detail": exc.detail})
    except Exception as exc:  # noqa: BLE001 - each one becomes the API's answer to it
        return refusal_of(exc, caller)


def may_write(caller: Caller) -> None:
    """What POST /api/v1/runs asks before it reads a body: a token (401), one that may
    write (403), within the token's and its organization's write limits (429)."""
    if caller.token is None:
        raise AuthenticationError()
    require_write_scope(caller.token)
    write_limit(caller.token)


def refusal_of(exc: Exception, caller: Caller) -> CallToolResult:
    """The REST API's answer to `exc` (apps/api/api.py's handlers) as a tool error."""
    unavailable = as_unavailable(exc)
    if unavailable is not None:
        # The API's JSON 503 (its handler renders an HTML page off /api/).
        detail = [{"path": unavailable.part, "message": unavailable.message}]
        return refusal(503, {"detail": detail}, unavailable.retry_after)
    response = api.on_exception(caller.request or HttpRequest(), exc)
    retry_after = response.get("Retry-After")
    return refusal(
        response.status_code,
        json.loads(response.content),
        int(retry_after) if retry_after else None,
    )


def refusal(status: int, body: dict[str, Any], retry_after: int | None = None) -> CallToolResult:
    """A tool error: the API's body with its HTTP status (and Retry-After, in seconds)."""
    error: dict[str, Any] = {"status": status, **body}
    if retry_after is not None:
        error["retry_after"] = retry_after
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(error))],
        structured_content=error,
        is_error=True,
    )
