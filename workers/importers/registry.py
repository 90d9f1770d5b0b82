"""The formats we import, and how to tell them apart from their bytes.

Each format registers a name, the tool and version whose output it reads, a sniffer that
looks at a parsed preview of the file, and the importer. `sniff` names exactly one format
or explains what it saw.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from workers.importers.common import YAML_PREFIX, PeerFile, load_json
from workers.importers.errors import ImportFailure
from workers.importers.unread import unread_format
from workers.results import ResultDocument


@dataclass(frozen=True)
class Preview:
    """What sniffers look at: the first JSON value (whole file, or first JSONL line)."""

    filename: str
    value: Any  # parsed JSON of the whole file, or None when it is not one JSON value
    first_line: Any  # parsed first line when the file is JSON Lines, else None
    problem: str = ""  # why the whole file is not JSON, when it is not
    text: str = ""  # the file as text, for the formats that are not JSON (MLPerf's summary)

    @property
    def first_item(self) -> Any:
        """The first element when the file is a non-empty JSON array, else None: what
        sniffers of array-shaped files (rows, records) look at."""
        value = self.value
        return value[0] if isinstance(value, list) and value else None

    @property
    def one_or_first(self) -> Any:
        """The file's value, or its first element when it is an array: for files that hold one
        result or a collected array of them."""
        return self.first_item if isinstance(self.value, list) else self.value

    @property
    def truncated(self) -> bool:
        return "truncated" in self.problem

    @property
    def yaml(self) -> bool:
        return self.problem.startswith(YAML_PREFIX)

    def describe(self) -> str:
        shown = self.value if self.value is not None else self.first_line
        if isinstance(shown, dict):
            keys = ", ".join(sorted(shown)[:12])
            more = "" if len(shown) <= 12 else f" (+{len(shown) - 12} more)"
            kind = "a JSON object" if self.value is not None else "JSON lines whose first is"
            return f"{kind} with keys {keys}{more}"
        if isinstance(shown, list):
            first = shown[0] if shown else None
            inner = (
                f" of objects with keys {', '.join(sorted(first)[:12])}"
                if isinstance(first, dict)
                else ""
            )
            return f"a JSON array of {len(shown)} item(s){inner}"
        if shown is None:
            return (
                f"neither JSON nor JSON lines ({self.problem})"
                if self.problem
                else ("neither JSON nor JSON lines")
            )
        return f"a JSON {type(shown).__name__}"


@dataclass(frozen=True)
class Format:
    name: str
    tool: str  # the tool and version whose output this reads
    summary: str
    sniff: Callable[[Preview], bool]
    parse: Callable[..., list[ResultDocument]]


_FORMATS: dict[str, Format] = {}


def register(fmt: Format) -> Format:
    if fmt.name in _FORMATS:
        raise ValueError(f"format {fmt.name} registered twice")
    _FORMATS[fmt.name] = fmt
    return fmt


def formats() -> dict[str, Format]:
    """Every format registered; the package (`workers/importers/__init__.py`) imports the
    format modules, so importing anything from `workers.importers` registers them all."""
    return dict(_FORMATS)


def get(name: str) -> Format:
    known = formats()
    if name not in known:
        raise ImportFailure(f"unknown format {name!r}; known formats: {', '.join(sorted(known))}")
    return known[name]


def preview(data: bytes, filename: str) -> Preview:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return Preview(filename, None, None, f"not UTF-8 text at byte {exc.start}")
    value = _try_json(text)
    first_line = None
    problem = ""
    if value is None:
        for line in text.splitlines():
            if line.strip():
                first_line = _try_json(line)
                break
        problem = _json_problem(text)
    return Preview(filename, value, first_line, problem, text)


def _json_problem(text: str) -> str:
    try:
        load_json(PeerFile(text.encode(), "file"), allow_nonfinite=True)
    except ImportFailure as exc:
        return str(exc).removeprefix("file: ")
    return ""


def _try_json(text: str) -> Any:
    try:
        # Infinity/NaN are accepted for sniffing only; importers decide whether they are valid.
        return json.loads(text, parse_constant=float)
    except ValueError:
        return None


def sniff(data: bytes, filename: str) -> str:
    """The one format this file is in, or ImportFailure saying what was seen."""
    if not data.strip():
        raise ImportFailure(f"{filename}: the file is empty")
    seen = preview(data, filename)
    matches = [fmt.name for fmt in formats().values() if _safe(fmt, seen)]
    if len(matches) == 1:
        return matches[0]
    if not matches and (seen.truncated or seen.yaml):
        # Say the file is cut short, or YAML, before anything about its format: that is the
        # fault, and 'not valid JSON at line 1' would hide it.
        raise ImportFailure(f"{filename}: {seen.problem}")
    if not matches:
        _refuse_unread(data, filename)
        raise ImportFailure(
            f"{filename}: cannot tell the format: saw {seen.describe()}; "
            f"give --format, one of: {', '.join(sorted(formats()))}"
        )
    raise ImportFailure(
        f"{filename}: the format is ambiguous ({', '.join(matches)}); give --format"
    )


def _refuse_unread(data: bytes, filename: str) -> None:
    """Refuse a file in a format we recognise and do not read, by its name."""
    recognised = unread_format(data.decode("utf-8-sig", errors="replace"))
    if recognised:
        instead = f"; {recognised.instead}" if recognised.instead else ""
        raise ImportFailure(
            f"{filename}: this is {recognised.what}: the format is recognised but not "
            f"read here, so no --format value imports it{instead}"
        )


def check_requested(data: bytes, filename: str, requested: str) -> None:
    """Refuse a --format the bytes contradict, before that format's reader says something
    misleading about them (a vLLM file read as sglang JSON Lines 'looks truncated'), and a
    file we recognise and do not read, whatever --format says."""
    _refuse_unread(data, filename)
    seen = preview(data, filename)
    if seen.value is None and seen.first_line is None and (seen.truncated or seen.yaml):
        raise ImportFailure(f"{filename}: {seen.problem}")
    known = formats()
    matches = [name for name, fmt in known.items() if _safe(fmt, seen)]
    if matches and requested not in matches:
        looks = matches[0]
        raise ImportFailure(
            f"{filename}: this looks like {looks} ({known[looks].tool}), not {requested} "
            f"({known[requested].tool}); drop --format or give --format {looks}"
        )


def _safe(fmt: Format, seen: Preview) -> bool:
    try:
        return bool(fmt.sniff(seen))
    except (KeyError, TypeError, AttributeError, IndexError):
        return False
