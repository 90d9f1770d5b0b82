from typing import Any

from workers.results import error_message, json_path

# Where a parameter came from is noise in a path the user must fix: drop it.
_LOCATIONS = {"body", "query", "path", "form", "file", "header", "cookie"}


def error_items(errors: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Ninja/pydantic errors as [{"path": "points[3].latency_ms.ttft.p99", "message": ...}]."""
    items = []
    for error in errors:
        loc = list(error.get("loc", ()))
        if loc and loc[0] in _LOCATIONS:
            loc = loc[1:]
        # A body parameter's own name ("document", "payload") is not part of the user's JSON.
        if loc and loc[0] in {"document", "payload"}:
            loc = loc[1:]
        items.append({"path": json_path(tuple(loc)), "message": error_message(error)})
    return items
