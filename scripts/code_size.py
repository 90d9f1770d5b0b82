"""Counts what makes code hard to read: functions over 60 lines and the largest modules.

    python scripts/code_size.py [--over 60] [--top 10] [paths ...]   (default: apps workers)

A function's length is from its `def` line to its last line (decorators and docstring
included, nested functions counted on their own as well); migrations are left out, as
Django writes them. Rerun it before and after a change to see what the change did.
"""

import argparse
import ast
from pathlib import Path


def python_files(roots: list[str]) -> list[Path]:
    return sorted(
        path
        for root in roots
        for path in Path(root).rglob("*.py")
        if "migrations" not in path.parts and ".venv" not in path.parts
    )


def long_functions(path: Path, over: int) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > over:
                found.append((length, f"{path}:{node.lineno} {node.name}"))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", default=["apps", "workers"])
    parser.add_argument("--over", type=int, default=60, help="function length limit (lines)")
    parser.add_argument("--top", type=int, default=10, help="how many largest modules")
    args = parser.parse_args()

    files = python_files(args.paths)
    functions = sorted((f for path in files for f in long_functions(path, args.over)), reverse=True)
    print(f"functions over {args.over} lines: {len(functions)}")
    for length, where in functions:
        print(f"  {length:4d}  {where}")
    sizes = sorted(((len(p.read_text().splitlines()), str(p)) for p in files), reverse=True)
    print(f"largest modules (of {len(files)}, {sum(n for n, _ in sizes)} lines in all):")
    for lines, where in sizes[: args.top]:
        print(f"  {lines:4d}  {where}")


if __name__ == "__main__":
    main()
