"""The layout issue 29 asks for: no module over 600 lines, and `workers/` free of the server.

Imports are read with `ast`, at module level and inside functions alike, so a lazy import
counts. The apps stand in one order (LAYERS), so their imports make no cycle.
"""

import ast
import importlib.util
import re
from pathlib import Path

from django.conf import settings

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 600


def _modules(top: str) -> list[Path]:
    """Every Python module under `top`, migrations and the test helpers aside."""
    return [
        path
        for path in sorted((ROOT / top).rglob("*.py"))
        if "migrations" not in path.parts and (ROOT / "workers" / "testing") not in path.parents
    ]


def _all_modules(top: str) -> list[Path]:
    return [path for path in sorted((ROOT / top).rglob("*.py")) if "migrations" not in path.parts]


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
    assert "workers.loadgen.members" in _imports(ROOT / "workers" / "tasks.py")


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
# result, a review and a job point at their run; the API mounts every router, and the MCP
# server (agents) answers with the API's errors.
LAYERS = [
    "accounts",
    "catalog",
    "runs",
    "accuracy",
    "trust",
    "imports",
    "projections",
    "costs",
    "regressions",
    "claims",
    # Margin, fleets and the TCO feed: reads the answer's points and the price book (costs).
    "economics",
    "leaderboard",
    "jobs",
    "api",
    # The MCP server: beside the API at the top, asking every app's services as the API does.
    "agents",
]
# Modules below every app: shared by all, importing none.
BELOW_ALL = [
    "charts.py",
    "cache.py",
    "htmx.py",
    "csv_safe.py",
    "api_errors.py",
    "errors.py",
    "api_params.py",
    "query_forms.py",
]


def _app_of(name: str) -> str | None:
    parts = name.split(".")
    return parts[1] if parts[0] == "apps" and len(parts) > 1 and parts[1] in LAYERS else None


def _up_arrows(root: Path = ROOT) -> set[str]:
    found = set()
    for path in sorted((root / "apps").rglob("*.py")):
        if "migrations" in path.parts:
            continue
        here = _app_of(".".join(path.relative_to(root).with_suffix("").parts))
        if here is None:
            continue
        for name in _imports(path):
            there = _app_of(name)
            if there is not None and LAYERS.index(there) > LAYERS.index(here):
                found.add(f"{path.relative_to(root)}: {name}")
    return found


def test_every_app_is_in_the_layer_order():
    apps = {p.name for p in (ROOT / "apps").iterdir() if (p / "__init__.py").exists()}
    assert apps == set(LAYERS)


def test_no_app_imports_one_above_it():
    # Ingestion tells the apps above runs through apps/runs/signals.py instead.
    assert _up_arrows() == set()


def test_the_walk_sees_an_arrow_up_even_inside_a_function(tmp_path):
    (tmp_path / "apps" / "catalog").mkdir(parents=True)
    (tmp_path / "apps" / "catalog" / "selectors.py").write_text(
        "from apps.accounts.models import Organization\n"
        "def scenarios():\n    from apps.runs.selectors import runs_visible\n"
    )
    assert _up_arrows(tmp_path) == {"apps/catalog/selectors.py: apps.runs.selectors"}


def test_the_shared_modules_import_no_app():
    found = {
        f"{name}: {imported}"
        for name in BELOW_ALL
        for imported in _imports(ROOT / "apps" / name)
        if imported == "apps" or imported.startswith("apps.")
    }
    assert found == set()


# Template dependencies: a `{% load name %}` runs that library's code for the template, so
# a template of one app loading the tags of an app above it is an arrow up, as an import
# would be (the board's templates once loaded the change-point tags while change points
# imported the board: a loop no Python import showed).
LOAD = re.compile(r"{%\s*load\s+(.+?)\s*%}")


def _libraries(root: Path = ROOT) -> dict[str, str]:
    """Each template library of the project -> the app that owns it; "" for a site-level
    one (settings.TEMPLATES' libraries outside any app)."""
    found = {
        path.stem: path.parts[-3]
        for path in (root / "apps").glob("*/templatetags/*.py")
        if path.name != "__init__.py"
    }
    for options in (t.get("OPTIONS", {}) for t in settings.TEMPLATES):
        for name, module in options.get("libraries", {}).items():
            found[name] = _app_of(module) or ""
    return found


def _loads(path: Path) -> set[str]:
    names: set[str] = set()
    for match in LOAD.finditer(path.read_text()):
        words = match.group(1).split()
        names.update(words[words.index("from") + 1 :] if "from" in words else words)
    return names


def _template_up_arrows(root: Path, libraries: dict[str, str]) -> set[str]:
    """Templates loading the tags of an app above their own; a site template (templates/,
    which every page extends) loading any app's tags."""
    found = set()
    for path in sorted((root / "apps").glob("*/templates/**/*.html")):
        here = path.relative_to(root / "apps").parts[0]
        for name in _loads(path):
            there = libraries.get(name)
            if there and here in LAYERS and LAYERS.index(there) > LAYERS.index(here):
                found.add(f"{path.relative_to(root)}: {{% load {name} %}} ({there})")
    for path in sorted((root / "templates").glob("**/*.html")):
        for name in _loads(path):
            if libraries.get(name):
                found.add(f"{path.relative_to(root)}: {{% load {name} %}} ({libraries[name]})")
    return found


def test_no_template_loads_the_tags_of_an_app_above_it():
    assert _template_up_arrows(ROOT, _libraries()) == set()


def test_the_template_walk_sees_a_load_of_tags_from_above(tmp_path):
    (tmp_path / "apps" / "catalog" / "templates" / "catalog").mkdir(parents=True)
    (tmp_path / "apps" / "catalog" / "templates" / "catalog" / "x.html").write_text(
        "{% load static frame %}{% load badge from regressions %}"
    )
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "base.html").write_text("{% load frame leaderboard %}")
    libraries = {"regressions": "regressions", "leaderboard": "leaderboard", "frame": ""}
    assert _template_up_arrows(tmp_path, libraries) == {
        "apps/catalog/templates/catalog/x.html: {% load regressions %} (regressions)",
        "templates/base.html: {% load leaderboard %} (leaderboard)",
    }


def test_the_site_frame_library_is_site_level_and_imports_no_app():
    libraries = _libraries()
    assert libraries["frame"] == ""
    assert not (ROOT / "apps" / "leaderboard" / "templatetags").exists()
    below = {f"apps.{name.removesuffix('.py')}" for name in BELOW_ALL}
    imported = {
        name
        for name in _imports(ROOT / "apps" / "frame.py")
        if name.startswith("apps.") and name not in below
    }
    assert imported == set()


def test_the_site_frame_spells_every_price_tier():
    from apps.costs.formulas import Tier
    from apps.frame import TIER_LABELS

    assert set(TIER_LABELS) == {tier.value for tier in Tier}


def _module_graph() -> dict[str, set[str]]:
    """Each module of apps/ and workers/ -> the modules of those trees it imports (a name
    imported from a package counts as the package, or as its submodule of that name)."""
    names = {}
    for top in ("apps", "workers"):
        for path in _all_modules(top):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
            names[name] = path
    graph = {}
    for name, path in names.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                wanted = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                wanted = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            else:
                continue
            for target in wanted:
                while target and target not in names:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    found.add(target)
        graph[name] = found
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle of the graph (its modules in order), or [] when there is none."""
    state: dict[str, str] = {}
    for start in sorted(graph):
        if start in state:
            continue
        path, stack = [start], [iter(sorted(graph[start]))]
        state[start] = "open"
        while stack:
            step = next(stack[-1], None)
            if step is None:
                state[path.pop()] = "done"
                stack.pop()
            elif state.get(step) == "open":
                return path[path.index(step) :] + [step]
            elif step not in state:
                state[step] = "open"
                path.append(step)
                stack.append(iter(sorted(graph[step])))
    return []


def test_no_modules_import_each_other_in_a_cycle():
    # TYPE_CHECKING imports count: a cycle hidden there is still one to read around.
    assert _cycle(_module_graph()) == []


def test_the_cycle_check_finds_one():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) == []


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
