"""Helpers for the accuracy tests (a uniquely named module: conftest is not importable)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workers.accuracy.protocols import EvalItem

SERVER = Path(__file__).with_name("scripted_server.py")


@dataclass
class ScriptedServer:
    url: str
    log_path: Path

    def requests(self) -> list[dict[str, Any]]:
        lines = self.log_path.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines]


def key_of(item: EvalItem) -> str:
    """The scripted server's lookup key: sha256 of the prompt or of the last user message."""
    text = item.prompt if item.prompt is not None else item.messages[-1]["content"]  # type: ignore[index]
    return hashlib.sha256(text.encode()).hexdigest()
