"""Where the real peer files live (copied unchanged from the shared fixtures)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "peer-results"


def fixture_path(relative: str) -> Path:
    return FIXTURES / relative


def read_json(relative: str) -> Any:
    return json.loads(fixture_path(relative).read_text())
