"""Runtime imports are runtime dependencies: every third-party module `workers/` imports is
in the base (worker) install, and every one `apps/` imports is in base + `server`."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

from workers.testing.processes import REPO_ROOT

PROJECT = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]


def names(requirements: list[str]) -> set[str]:
    return {normalise(re.match(r"[A-Za-z0-9_.-]+", r).group(0)) for r in requirements}


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def third_party_imports(folder: Path, skip: tuple[str, ...] = ()) -> dict[str, set[str]]:
    """Top-level module name -> files importing it, for modules outside the stdlib and repo."""
    found: dict[str, set[str]] = {}
    for path in folder.rglob("*.py"):
        relative = str(path.relative_to(REPO_ROOT))
        if relative.startswith(skip):
            continue
        for node in ast.walk(ast.parse(path.read_text(), relative)):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            else:
                continue
            for module in modules:
                top = module.split(".")[0]
                if top not in sys.stdlib_module_names and top not in {"apps", "workers"}:
                    found.setdefault(top, set()).add(relative)
    return found


def distributions_of(imports: dict[str, set[str]]) -> dict[str, set[str]]:
    provided = importlib.metadata.packages_distributions()
    return {module: {normalise(d) for d in provided.get(module, [])} for module in imports}


def test_every_module_the_worker_imports_is_a_base_dependency():
    # workers/testing holds test servers and the tiny-model writer (which needs dev's gguf).
    imports = third_party_imports(REPO_ROOT / "workers", skip=("workers/testing/",))
    base = names(PROJECT["dependencies"])
    missing = {
        module: sorted(imports[module])
        for module, dists in distributions_of(imports).items()
        if not dists & base
    }
    assert missing == {}


def test_every_module_the_server_imports_is_a_base_or_server_dependency():
    imports = third_party_imports(REPO_ROOT / "apps")
    allowed = names(PROJECT["dependencies"]) | names(PROJECT["optional-dependencies"]["server"])
    missing = {
        module: sorted(imports[module])
        for module, dists in distributions_of(imports).items()
        if not dists & allowed
    }
    assert missing == {}


def test_the_worker_needs_no_server_dependency():
    base = names(PROJECT["dependencies"])
    assert not base & {"django", "django-ninja", "django-htmx", "psycopg", "plotly"}
