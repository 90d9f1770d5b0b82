"""TTFT p99's key is spelt in workers/figures.py and nowhere else outside migrations and tests
(issue 41): every other reader takes the figure, its column and its wire names from the
registry, so the five keys that once drifted apart cannot come back."""

from __future__ import annotations

import os
from pathlib import Path

from workers import figures

ROOT = Path(__file__).resolve().parents[2]
KEY = "ttft_p99"
# Code and templates; the docs (data-dumps.md) describe the wire names users read.
SOURCES = (".py", ".html", ".js")
# Tests and migrations may spell it; the rest is what .gitignore keeps out (builds, caches).
SKIPPED = {"tests", "migrations", "node_modules", "__pycache__", "var", "build", "dist"}


def spellings(root: Path, key: str = KEY) -> list[str]:
    """Each source file under `root` that spells `key`, as a path relative to `root`."""
    found = []
    for folder, dirs, files in os.walk(root):  # symlinks (the .venv link) are not followed
        dirs[:] = [
            d
            for d in dirs
            if d not in SKIPPED and not d.startswith(".") and not d.endswith(".egg-info")
        ]
        for name in files:
            path = Path(folder) / name
            if path.suffix in SOURCES and key in path.read_text(encoding="utf-8"):
                found.append(path.relative_to(root).as_posix())
    return sorted(found)


def test_it_is_a_figure_of_the_registry():
    assert figures.figure(KEY).label == "TTFT p99"


def test_only_the_registry_spells_ttft_p99s_key():
    assert spellings(ROOT) == ["workers/figures.py"]


def test_the_walk_finds_a_spelling_outside_tests_and_migrations(tmp_path):
    for path in (
        "apps/runs/models.py",
        "apps/runs/migrations/0001_initial.py",
        "apps/leaderboard/templates/leaderboard/row.html",
        "tests/apps/test_rows.py",
        "docs/data-dumps.md",
        ".venv/lib/site.py",
        "build/lib/apps/runs/models.py",
    ):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(f"value = row.{KEY}_ms\n")
    assert spellings(tmp_path) == [
        "apps/leaderboard/templates/leaderboard/row.html",
        "apps/runs/models.py",
    ]
