"""The one reader of the accelerators file: every accelerator inferboard knows, one entry each.

`apps/catalog/reference/accelerators.json` holds, per SKU, its vendor, memory, dense peak
FLOP/s per precision, interconnect, board power, chart colour and its prices in each dated
price set, each with its source. The catalog's rows, the price book (and so /costs/, the
board and the answer), the projections' datasheets, the ceiling check, the chart colours and
the importers' SKU names all read it through here, so adding an accelerator is one entry in
one file. Pure (no Django): the workers read the same datasheets as the server.

`INFERBOARD_ACCELERATORS_FILE` points every reader at another copy of the file (a staff
edit under review, a test's temporary copy); it is read here and nowhere else.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from workers.env import env_str

SHIPPED_FILE = Path(__file__).resolve().parents[1] / "apps/catalog/reference/accelerators.json"
FILE_VARIABLE = "INFERBOARD_ACCELERATORS_FILE"


def accelerators_file() -> Path:
    """The file every reader reads: the shipped one, or the copy the environment names."""
    return Path(env_str(FILE_VARIABLE) or SHIPPED_FILE)


@cache
def reference_at(path: Path) -> dict[str, Any]:
    """The whole file at `path`: `accelerators`, `price_sets` (each set's name, date and
    source), `tiers` and the `sources` the entries cite. A missing file is a
    FileNotFoundError. Cached by path, so a reader pointed at another copy reads that copy;
    readers that build on it cache by path too."""
    return json.loads(path.read_text())


def reference() -> dict[str, Any]:
    """The file every reader reads (`accelerators_file`)."""
    return reference_at(accelerators_file())


def entries() -> list[dict[str, Any]]:
    """One dict per accelerator, in the file's order."""
    return list(reference()["accelerators"])


def skus() -> tuple[str, ...]:
    return tuple(entry["sku"] for entry in entries())


def entry(sku: str) -> dict[str, Any] | None:
    """The accelerator's entry (SKU in any case), or None when the file has none."""
    wanted = sku.upper()
    return next((e for e in entries() if e["sku"].upper() == wanted), None)
