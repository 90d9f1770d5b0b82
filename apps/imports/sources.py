"""Where the InferenceX sync reads from: its public API, or a folder of saved responses.

Reads only; nothing here touches the database. Every failure is a SourceError whose message
names the URL or file and what was wrong, so a failed sync says why.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

# The files a folder holds: the names InferenceX-app gives the same responses in its fixtures.
FOLDER_FILES = {
    "benchmarks": "benchmarks.json",
    "history": "benchmarks-history.json",
    "evaluations": "evaluations.json",
}
# The history route needs the sequence (`isl`, `osl`); these are InferenceX's three.
SEQUENCES = ((1024, 1024), (8192, 1024), (1024, 8192))
READ_TIMEOUT_S = 60.0
MAX_RESPONSE_BYTES = 64 * 1024 * 1024


class SourceError(Exception):
    """The source could not be read, or did not hold what the API serves."""


@dataclass(frozen=True)
class Responses:
    description: str  # what was read, for citations: the URL or folder, and when
    benchmarks: list[Any]
    history: list[Any]
    evaluations: list[Any]
    # (file name, sha256) of each file read from a folder; empty for the API.
    files: tuple[tuple[str, str], ...] = ()


def read_folder(folder: Path, *, description: str = "") -> Responses:
    """The saved responses in `folder` (benchmarks.json required, the others optional)."""
    if not folder.is_dir():
        raise SourceError(f"{folder}: no such folder")
    parsed: dict[str, list[Any]] = {}
    files = []
    for part, name in FOLDER_FILES.items():
        path = folder / name
        if not path.exists():
            if part == "benchmarks":
                raise SourceError(f"{path}: missing (a folder source needs {name})")
            parsed[part] = []
            continue
        data = path.read_bytes()
        parsed[part] = _array(data, str(path))
        files.append((name, hashlib.sha256(data).hexdigest()))
    return Responses(
        description=description or f"folder {folder}",
        benchmarks=parsed["benchmarks"],
        history=parsed["history"],
        evaluations=parsed["evaluations"],
        files=tuple(files),
    )


def read_api(base_url: str, *, models: list[str], read_on: str) -> Responses:
    """The latest, history and evaluation responses of InferenceX's API at `base_url`
    (e.g. https://inferencex.com/api/v1) for the named models."""
    base = base_url.rstrip("/")
    benchmarks: list[Any] = []
    history: list[Any] = []
    with httpx.Client(timeout=READ_TIMEOUT_S, follow_redirects=False) as client:
        for model in models:
            benchmarks += _get(client, f"{base}/benchmarks", {"model": model})
            for isl, osl in SEQUENCES:
                params = {"model": model, "isl": str(isl), "osl": str(osl)}
                history += _get(client, f"{base}/benchmarks/history", params)
        evaluations = _get(client, f"{base}/evaluations", {})
    return Responses(
        description=f"{base} read on {read_on}",
        benchmarks=benchmarks,
        history=history,
        evaluations=evaluations,
    )


def _get(client: httpx.Client, url: str, params: dict[str, str]) -> list[Any]:
    shown = str(httpx.URL(url, params=params))
    try:
        answer = client.get(url, params=params)
    except httpx.HTTPError as exc:
        raise SourceError(f"{shown}: unreachable ({type(exc).__name__}: {exc})") from None
    if answer.status_code != 200:
        raise SourceError(f"{shown}: answered HTTP {answer.status_code}, not 200")
    if len(answer.content) > MAX_RESPONSE_BYTES:
        raise SourceError(f"{shown}: the response is over {MAX_RESPONSE_BYTES} bytes")
    return _array(answer.content, shown)


def _array(data: bytes, where: str) -> list[Any]:
    try:
        value = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise SourceError(f"{where}: not JSON ({exc})") from None
    if not isinstance(value, list):
        raise SourceError(f"{where}: expected a JSON array of rows, got {type(value).__name__}")
    return value
