"""The layout issue 29 asks for: no module over 600 lines, and `workers/` free of the server.

Imports are read with `ast`, at module level and inside functions alike, so a lazy import
counts. The apps stand in one order (LAYERS); the only arrows still pointing up are run
ingestion's four (KNOWN_UP), which keep runs in a cycle with accuracy, trust and jobs.
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


# The apps, lowest first: each may import those before it, never one after it. The order
# follows the models: a run points at its deployment and scenario (catalog), an accuracy
# result, a review and a job point at their run; the API mounts every router.
LAYERS = [
    "accounts",
    "catalog",
    "runs",
    "accuracy",
    "trust",
    "imports",
    "projections",
    "costs",
    "leaderboard",
    "regressions",
    "jobs",
    "api",
]
# The arrows still pointing up, all in run ingestion: it stores a document's accuracy
# results, checks the board's rules and, for a document that claims a job, checks the job.
# Listed so that no new one appears, and so that this list is kept true as they go.
KNOWN_UP = {
    "apps/runs/services.py: apps.accuracy.services",
    "apps/runs/services.py: apps.jobs.crypto",
    "apps/runs/services.py: apps.jobs.models",
    "apps/runs/services.py: apps.trust.services",
}
# Modules below every app: shared by all, importing none.
BELOW_ALL = [
    "charts.py",
    "cache.py",
    "htmx.py",
    "csv_safe.py",
    "api_errors.py",
    "api_params.py",
    "query_forms.py",
]


def _app_of(name: str) -> str | None:
    parts = name.split(".")
    return parts[1] if parts[0] == "apps" and len(parts) > 1 and parts[1] in LAYERS else None


def _up_arrows() -> set[str]:
    found = set()
    for path in _modules("apps"):
        here = _app_of(".".join(path.relative_to(ROOT).with_suffix("").parts))
        if here is None:
            continue
        for name in _imports(path):
            there = _app_of(name)
            if there is not None and LAYERS.index(there) > LAYERS.index(here):
                found.add(f"{path.relative_to(ROOT)}: {name}")
    return found


def test_every_app_is_in_the_layer_order():
    apps = {p.name for p in (ROOT / "apps").iterdir() if (p / "__init__.py").exists()}
    assert apps == set(LAYERS)


def test_no_app_imports_one_above_it_but_the_known_arrows_of_ingestion():
    assert _up_arrows() == KNOWN_UP


def test_the_shared_modules_import_no_app():
    found = {
        f"{name}: {imported}"
        for name in BELOW_ALL
        for imported in _imports(ROOT / "apps" / name)
        if imported == "apps" or imported.startswith("apps.")
    }
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
