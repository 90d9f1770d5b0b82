"""Print, or write into docs/architecture.md, one line per module of apps/ and workers/: what it
owns, in the first sentence of its docstring (a management command's: its `help`).

The module's own docstring is the one place that says what it owns; the map is generated
from it, and tests/test_module_layout.py fails when the page and the code disagree.

    python scripts/module_map.py           # print the map
    python scripts/module_map.py --write   # replace the map in docs/architecture.md
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "architecture.md"
BEGIN, END = "<!-- module map: scripts/module_map.py --write -->", "<!-- end of module map -->"


def modules() -> list[Path]:
    """Every module the map lists: apps/ and workers/, less migrations and empty packages."""
    found = []
    for top in ("apps", "workers"):
        for path in sorted((ROOT / top).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            if path.name == "__init__.py" and not path.read_text().strip():
                continue
            found.append(path)
    # A folder's own modules, then its subfolders'.
    return sorted(found, key=lambda path: (path.parent.parts, path.name))


def _command_help(tree: ast.Module) -> str | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "Command":
            for item in node.body:
                if (
                    isinstance(item, ast.Assign)
                    and any(isinstance(t, ast.Name) and t.id == "help" for t in item.targets)
                    and isinstance(item.value, ast.Constant)
                ):
                    return str(item.value.value)
    return None


def summary(path: Path) -> str | None:
    """The first sentence of the module's docstring (or its command's help); None: it has none."""
    tree = ast.parse(path.read_text())
    text = ast.get_docstring(tree) or _command_help(tree)
    if not text:
        return None
    paragraph = " ".join(text.split("\n\n")[0].split())
    return re.split(r"(?<=[.!?])\s", paragraph)[0]


def module_map() -> str:
    lines: list[str] = []
    folder = None
    for path in modules():
        relative = path.relative_to(ROOT)
        if relative.parent != folder:
            folder = relative.parent
            lines += ["", f"**`{folder.as_posix()}/`**", ""]
        lines.append(f"- `{relative.name}`: {summary(path) or '(no docstring)'}")
    return "\n".join(lines).strip() + "\n"


def page_with_map(page: str, generated: str) -> str:
    start, end = page.index(BEGIN) + len(BEGIN), page.index(END)
    return page[:start] + "\n\n" + generated + "\n" + page[end:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="rewrite the map in " + str(PAGE))
    args = parser.parse_args()
    missing = [str(p.relative_to(ROOT)) for p in modules() if summary(p) is None]
    if missing:
        print("modules without a docstring:\n  " + "\n  ".join(missing), file=sys.stderr)
        return 1
    generated = module_map()
    if args.write:
        PAGE.write_text(page_with_map(PAGE.read_text(), generated))
        print(f"wrote {len(modules())} modules into {PAGE.relative_to(ROOT)}")
    else:
        print(generated, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
