"""The API's one error body (Errors), the 503 for a part that is down, and pydantic's errors as
field paths."""

import re
from typing import Any

from django.conf import settings
from django.db import InterfaceError, OperationalError
from ninja import Schema

from workers.result_fields import error_loc, json_path
from workers.results import error_message


class ErrorItem(Schema):
    path: str
    message: str


class Errors(Schema):
    """Every error body the API answers: what is wrong, each item naming its field path, or
    one sentence (a 401, a 503). One schema for every endpoint and the OpenAPI document."""

    detail: list[ErrorItem] | str


# What an upload (a result document, a peer tool's file) can be refused with: no token, a
# conflict with what is stored, too large, invalid, too many writes.
UPLOAD_ERRORS = {401: Errors, 409: Errors, 413: Errors, 422: Errors, 429: Errors}


def error_body(path: str, message: str) -> dict[str, Any]:
    return {"detail": [{"path": path, "message": message}]}


def errors_json_schema() -> dict[str, Any]:
    """`Errors` as an inline JSON Schema (its $defs resolved in place), for responses the
    OpenAPI document adds to every operation."""
    schema = Errors.model_json_schema()
    defs = schema.pop("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref", "")
            if ref.startswith("#/$defs/"):
                return inline(defs[ref.removeprefix("#/$defs/")])
            return {key: inline(value) for key, value in node.items()}
        if isinstance(node, list):
            return [inline(value) for value in node]
        return node

    return inline(schema)


# The database could not be reached (refused, timed out, no pooled connection in time) or
# dropped the connection: the request can succeed later, so it is a 503, not a 500.
DATABASE_DOWN = (OperationalError, InterfaceError)


class ServiceUnavailable(Exception):
    """A part the request needs (database, broker) is down: 503 with Retry-After."""

    def __init__(self, part: str, message: str, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.part = part
        self.message = message
        self.retry_after = retry_after or settings.UNAVAILABLE_RETRY_AFTER_S


def database_unavailable() -> ServiceUnavailable:
    return ServiceUnavailable("database", "the database is unreachable or busy; retry later")


# Where a parameter came from is noise in a path the user must fix: drop it.
_LOCATIONS = {"body", "query", "path", "form", "file", "header", "cookie"}


def error_items(errors: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Ninja/pydantic errors as [{"path": "points[3].latency_ms.ttft.p99", "message": ...}]."""
    items: list[dict[str, str]] = []
    for error in errors:
        loc = list(error_loc(error))
        if loc and loc[0] in _LOCATIONS:
            loc = loc[1:]
        # A parameter's own name ("document", "payload", "body", a query schema's "query") is not
        # part of what the user sent.
        if len(loc) > 1 and loc[0] in {"document", "payload", "query", "body"}:
            loc = loc[1:]
        # A union's member ("literal['none']", "function-after[...]") is pydantic's name for
        # one way the value could have been read, not a field: the user named the field.
        member = [part for part in loc if not _union_member(part)]
        item = {"path": json_path(tuple(member)), "message": error_message(error)}
        # Each member of a union refuses the value in turn: the first says it best.
        if member == loc or all(seen["path"] != item["path"] for seen in items):
            items.append(item)
    return items


_UNION_MEMBER = re.compile(r"^[a-z-]+\[.*\]$|^constrained-[a-z]+$")


def _union_member(part: Any) -> bool:
    return isinstance(part, str) and bool(_UNION_MEMBER.match(part))
