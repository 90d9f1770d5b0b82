"""CSV cells a spreadsheet will not run: text starting with = + - @ (or a tab or carriage
return) is a formula to Excel and LibreOffice, so it gets a leading apostrophe (OWASP's
advice). Numbers are left alone: -5.0 is a number, not a formula."""

from collections.abc import Iterable
from typing import Any

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: Any) -> Any:
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def safe_rows(rows: Iterable[dict[str, Any]]) -> Iterable[dict[str, Any]]:
    for row in rows:
        yield {key: safe_cell(value) for key, value in row.items()}
