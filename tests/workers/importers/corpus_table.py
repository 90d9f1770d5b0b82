"""The per-format table of the wild corpus: files found, imported, refused and why.

    .venv/bin/python -m tests.workers.importers.corpus_table

Each file is imported with no facts, as a new user would first try; a refusal that names
missing facts is answered once with the flags it names (as test_wild_corpus does), and a
refusal by name is counted with its reason. Nothing is written into this table by hand.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

from tests.workers.importers.test_wild_corpus import _GIVEN_FOR, FILES, WILD
from tests.workers.importers.wild_fourth import NOTHING_MEASURED
from workers.importers import Facts, ImportFailure, facts_from_arguments, import_file
from workers.importers.common import MissingFacts


def outcome(path: Path) -> tuple[str, str]:
    """('no facts' | 'one refusal' | 'refused', what was asked or why it was refused)."""
    data = path.read_bytes()
    try:
        import_file(data, path.name, facts=Facts())
        return "no facts", ""
    except MissingFacts as refusal:
        missing = refusal.missing
    except ImportFailure as refusal:
        return "refused", _why(str(refusal))
    given = facts_from_arguments(dict(_GIVEN_FOR[name] for name in missing))
    import_file(data, path.name, facts=given)  # raises if one refusal was not enough
    asked = ", ".join(SHORT.get(name, name.rsplit(".", 1)[-1]) for name in missing)
    return "one refusal", asked


SHORT = {"model.name": "model", "deployment.engine.name": "engine",
         "deployment.speculative.method": "spec method"}  # fmt: skip


def _why(message: str) -> str:
    text = message.split(": ", 1)[-1]
    if NOTHING_MEASURED in text:
        return text.split(" (")[0].removeprefix("this ") + f", {NOTHING_MEASURED}"
    for marker in ("recognised but not read", "which we do not read", "with --records"):
        if marker in text:
            what = text.split(":")[0].split(" (")[0]
            return what.removeprefix("this is ").removeprefix("this looks like ")
    return text[:80]


def table() -> str:
    rows: dict[str, Counter[str]] = defaultdict(Counter)
    asked: dict[str, Counter[str]] = defaultdict(Counter)
    why: dict[str, Counter[str]] = defaultdict(Counter)
    for path in FILES:
        fmt = str(path.relative_to(WILD)).split("/", 1)[0]
        kind, detail = outcome(path)
        rows[fmt][kind] += 1
        if kind == "one refusal":
            asked[fmt][detail] += 1
        elif kind == "refused":
            why[fmt][detail] += 1
    lines = [
        "| format | files | imported, no facts | imported after one refusal | refused by name |"
        " facts the one refusal asked | why refused |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    total: Counter[str] = Counter()
    for fmt in sorted(rows):
        counts = rows[fmt]
        total.update(counts)
        lines.append(
            f"| {fmt} | {sum(counts.values())} | {counts['no facts']} | "
            f"{counts['one refusal']} | {counts['refused']} | "
            f"{'; '.join(f'{a} ({n})' for a, n in asked[fmt].items())} | "
            f"{'; '.join(f'{w} ({n})' for w, n in why[fmt].items())} |"
        )
    lines.append(
        f"| all | {sum(total.values())} | {total['no facts']} | {total['one refusal']} | "
        f"{total['refused']} | | |"
    )
    return "\n".join(lines)


if __name__ == "__main__":
    print(table())
