"""The shipped reference data projections read: architectures, accelerators, InferenceX rows.

The only module of apps/projections that reads files; everything else is pure.
"""

import json
from functools import cache
from pathlib import Path
from typing import Any

from apps.catalog.reference import INFERENCEX_DIR
from apps.projections.model import Accelerator, Architecture

REFERENCE_DIR = Path(__file__).parent / "reference"


def _load(name: str) -> dict[str, Any]:
    return json.loads((REFERENCE_DIR / name).read_text())


@cache
def architectures() -> dict[str, Architecture]:
    """By name and by every alias, lower-cased."""
    found: dict[str, Architecture] = {}
    for row in _load("models.json")["models"]:
        arch = Architecture(
            **{k: v for k, v in row.items() if k not in ("aliases", "source", "note")}
        )
        for name in [row["name"], *row.get("aliases", [])]:
            found[name.lower()] = arch
    return found


@cache
def accelerators() -> dict[str, Accelerator]:
    """By SKU, upper-cased."""
    fields = ("sku", "family", "vendor", "hbm_gb", "hbm_tb_s", "tflops", "interconnect_gb_s")
    return {
        row["sku"].upper(): Accelerator(**{k: row[k] for k in fields})
        for row in _load("accelerators.json")["accelerators"]
    }


def sources() -> dict[str, list[dict[str, str]]]:
    """What each specification rests on, for the methodology page and the story."""
    return {
        "models": [
            {"name": m["name"], "source": m["source"]} for m in _load("models.json")["models"]
        ],
        "accelerators": [
            {"name": a["sku"], "source": a["source"], "note": a.get("note", "")}
            for a in _load("accelerators.json")["accelerators"]
        ],
    }


@cache
def inferencex_rows() -> tuple[dict[str, Any], ...]:
    """The shipped InferenceX snapshot (latest per configuration), as its API wrote it."""
    return tuple(json.loads((INFERENCEX_DIR / "benchmarks.json").read_text()))
