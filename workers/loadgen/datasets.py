"""Prompt datasets users bring: a JSONL of prompts, or of ShareGPT conversations.

As peer tools read them: a prompts row is {"prompt": ...} (or "text"), optionally with
"output_tokens"; a ShareGPT row is {"conversations": [{"from": "human", "value": ...},
{"from": "gpt", "value": ...}, ...]}, whose first human message is the prompt and whose
first answer's length (by the run's token counter) is the output length, as vLLM's
benchmark does. The file's sha256 goes into the scenario, so runs on the same bytes are
comparable and runs on different ones never are.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sized
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from workers.loadgen.client import RequestSpec
from workers.loadgen.prompts import TokenCounter
from workers.result_facts import TraceIdentity

Format = Literal["prompts-jsonl", "sharegpt"]


class DatasetError(ValueError):
    """A dataset file that cannot be used; the message names the line and field."""


@dataclass(slots=True, frozen=True)
class DatasetRow:
    prompt: str
    output_tokens: int | None  # None: the run's --output-tokens decides


def _row(raw: object, number: int) -> tuple[DatasetRow, Format]:
    if not isinstance(raw, dict):
        raise DatasetError(f"line {number}: expected a JSON object")
    conversation = raw.get("conversations")
    if conversation is not None:
        if not isinstance(conversation, list):
            raise DatasetError(f"line {number}: conversations must be a list")
        turns = [t for t in conversation if isinstance(t, dict)]
        human = next((t for t in turns if t.get("from") in ("human", "user")), None)
        if human is None or not isinstance(human.get("value"), str) or not human["value"]:
            raise DatasetError(f"line {number}: conversations has no human message")
        return DatasetRow(human["value"], None), "sharegpt"
    prompt = raw.get("prompt", raw.get("text"))
    if not isinstance(prompt, str) or not prompt:
        raise DatasetError(f"line {number}: prompt must be a non-empty string")
    out = raw.get("output_tokens")
    if out is not None and (type(out) is not int or out < 1):
        raise DatasetError(f"line {number}: output_tokens must be a positive integer")
    return DatasetRow(prompt, out), "prompts-jsonl"


def _answer(raw: dict) -> str | None:
    turns = [t for t in raw.get("conversations", []) if isinstance(t, dict)]
    seen_human = False
    for turn in turns:
        if turn.get("from") in ("human", "user"):
            seen_human = True
        elif seen_human and turn.get("from") in ("gpt", "assistant"):
            value = turn.get("value")
            return value if isinstance(value, str) and value else None
    return None


@dataclass(slots=True)
class Dataset:
    rows: list[DatasetRow]
    identity: TraceIdentity


def json_lines(
    data: bytes, error: type[Exception], *, limit: int | None, rows: Sized
) -> Iterator[tuple[int, Any]]:
    """(line number, value) of each non-blank line of a JSONL file until the caller's `rows`
    hold `limit` (checked before the next line is parsed, so a bad line past the limit is
    never read); a line that is not JSON raises `error`."""
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        if limit is not None and len(rows) >= limit:
            return
        try:
            value = json.loads(line)
        except ValueError as exc:
            raise error(f"line {number}: not JSON ({exc})") from None
        yield number, value


def read_dataset(path: Path, counter: TokenCounter, limit: int | None = None) -> Dataset:
    """The first `limit` usable rows (all when None) and the file's identity. ShareGPT
    conversations without an answer to size the output are skipped, as peer tools do."""
    data = path.read_bytes()
    rows: list[DatasetRow] = []
    formats: set[Format] = set()
    for number, raw in json_lines(data, DatasetError, limit=limit, rows=rows):
        row, kind = _row(raw, number)
        formats.add(kind)
        if kind == "sharegpt":
            answer = _answer(raw)
            if answer is None:
                continue
            row = DatasetRow(row.prompt, max(1, counter.count(answer)))
        rows.append(row)
    if len(formats) > 1:
        raise DatasetError("the file mixes prompt rows and ShareGPT conversations")
    if not rows:
        raise DatasetError("the file has no usable rows")
    identity = TraceIdentity(
        name=path.name[:200],
        sha256=hashlib.sha256(data).hexdigest(),
        format=formats.pop(),
        requests=len(rows),
    )
    return Dataset(rows, identity)


def dataset_name(identity: TraceIdentity) -> str:
    return f"file-{identity.format}-{identity.sha256[:16]}"


class DatasetWorkload:
    """The file's prompts in order (round robin when the run asks for more)."""

    def __init__(self, dataset: Dataset, output_tokens: int | None) -> None:
        self.dataset = dataset
        self.output_tokens = output_tokens

    def warmup_specs(self, width: int) -> list[RequestSpec]:
        return []

    def spec(self, k: int) -> RequestSpec:
        row = self.dataset.rows[k % len(self.dataset.rows)]
        max_tokens = self.output_tokens or row.output_tokens
        if max_tokens is None:
            raise DatasetError("a prompt row without output_tokens needs --output-tokens")
        return RequestSpec(prompt=row.prompt, max_tokens=max_tokens)
