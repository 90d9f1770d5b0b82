"""The layout issue 29 asks for: no module over 600 lines, and `workers/` free of the server.

Imports are read with `ast`, at module level and inside functions alike, so a lazy import
counts. The apps.<domain> import graph still has cycles (accounts <-> runs, runs <-> trust,
jobs <-> runs ...), so the layering is asserted only for the arrows already broken (BELOW).
"""

import ast
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 600


def _modules(top: str) -> list[Path]:
    """Every Python module under `top`, migrations and the test helpers aside."""
    return [
        path
        for path in sorted((ROOT / top).rglob("*.py"))
        if "migrations" not in path.parts and (ROOT / "workers" / "testing") not in path.parents
    ]


def _imports(path: Path) -> set[str]:
    """The absolute names a module imports, wherever in it the import stands."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def test_no_module_is_over_600_lines():
    long = {
        str(path.relative_to(ROOT)): lines
        for path in _modules("apps") + _modules("workers")
        if (lines := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}


def test_the_layout_walk_sees_the_modules_and_their_lazy_imports():
    modules = _modules("workers")
    assert ROOT / "workers" / "results.py" in modules
    assert not any("testing" in path.parts for path in modules)
    # workers/tasks.py imports the load generator inside a function.
    assert "workers.loadgen.output" in _imports(ROOT / "workers" / "tasks.py")


def test_workers_import_nothing_of_the_server():
    # GPU hosts install the worker without the server: no apps.*, no Django.
    found = {
        f"{path.relative_to(ROOT)}: {name}"
        for path in _modules("workers")
        for name in _imports(path)
        if name.split(".")[0] in ("apps", "django")
    }
    assert found == set()


# Domains that pages are built on, and the page domains above them they must not import. The
# chart helpers every app shares live in apps/charts.py, below all of them.
BELOW = {
    "apps/charts.py": {"apps"},
    "apps/costs": {"apps.leaderboard"},
    "apps/projections": {"apps.leaderboard"},
}


def test_the_domains_below_the_pages_do_not_import_them():
    found = set()
    for place, above in BELOW.items():
        target = ROOT / place
        paths = [target] if target.suffix == ".py" else _modules(place)
        for path in paths:
            for name in _imports(path):
                if any(name == top or name.startswith(f"{top}.") for top in above):
                    found.add(f"{path.relative_to(ROOT)}: {name}")
    assert found == set()


def _module_map():
    spec = importlib.util.spec_from_file_location("module_map", ROOT / "scripts" / "module_map.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_module_says_what_it_owns():
    module_map = _module_map()
    missing = [str(p.relative_to(ROOT)) for p in module_map.modules() if not module_map.summary(p)]
    assert missing == []


def test_the_architecture_page_lists_every_module_as_its_docstring_says():
    module_map = _module_map()
    page = module_map.PAGE.read_text()
    # Out of date: run `python scripts/module_map.py --write`.
    assert module_map.page_with_map(page, module_map.module_map()) == page
    assert "- `pipeline.py`: " in page and "**`workers/loadgen/`**" in page
