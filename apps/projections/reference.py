"""The shipped reference data projections read: architectures, accelerators (the one
accelerators file, workers/accelerator_specs.py), InferenceX rows.

The only module of apps/projections that reads files; everything else is pure.
"""

import dataclasses
import json
from functools import cache
from pathlib import Path
from typing import Any

from apps.catalog.reference import GLM52_COOKBOOK_FILE, INFERENCEX_DIR
from apps.projections import validation
from apps.projections.model import Accelerator, Architecture, Observation
from workers import accelerator_specs

REFERENCE_DIR = Path(__file__).parent / "reference"
CALIBRATION_FILE = REFERENCE_DIR / "calibration.json"


def _load(name: str) -> dict[str, Any]:
    return json.loads((REFERENCE_DIR / name).read_text())


class ReferenceDataError(ValueError):
    """A staff edit to the reference files that cannot be read: names file, entry, field."""


def build(kind: type, row: dict[str, Any], *, file: str, extra: set[str]) -> Any:
    """One dataclass from one JSON entry; a missing, unknown or mistyped field is named
    (the reference files are edited by hand)."""
    fields = {f.name: f for f in dataclasses.fields(kind)}
    entry = row.get("name") or row.get("sku") or "?"
    unknown = set(row) - set(fields) - extra
    if unknown:
        raise ReferenceDataError(f"{file}: {entry}: unknown field(s) {sorted(unknown)}")
    required = {
        n
        for n, f in fields.items()
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }
    missing = required - set(row)
    if missing:
        raise ReferenceDataError(f"{file}: {entry}: missing field(s) {sorted(missing)}")
    for name in ("params_total_b", "params_active_b", "hbm_gb", "hbm_tb_s", "interconnect_gb_s"):
        if name in row and not (isinstance(row[name], int | float) and row[name] > 0):
            raise ReferenceDataError(f"{file}: {entry}: {name} must be a positive number")
    return kind(**{k: v for k, v in row.items() if k in fields})


def parse_architectures(rows: list[dict[str, Any]]) -> dict[str, Architecture]:
    found: dict[str, Architecture] = {}
    for row in rows:
        arch = build(Architecture, row, file="models.json", extra={"aliases", "source", "note"})
        for name in [row["name"], *row.get("aliases", [])]:
            found[name.lower()] = arch
    return found


# The accelerators file's fields the projections do not read (its prices, chart colour ...).
NOT_DATASHEET = {
    "source",
    "note",
    "board_power_w",
    "gpus_per_node",
    "colour",
    "listed_in",
    "price_note",
    "prices",
}


def parse_accelerators(rows: list[dict[str, Any]]) -> dict[str, Accelerator]:
    extra = NOT_DATASHEET
    return {
        row["sku"].upper(): build(Accelerator, row, file="accelerators.json", extra=extra)
        for row in rows
    }


@cache
def architectures() -> dict[str, Architecture]:
    """By name and by every alias, lower-cased."""
    return parse_architectures(_load("models.json")["models"])


@cache
def _accelerators_at(path: Path) -> dict[str, Accelerator]:
    return parse_accelerators(accelerator_specs.reference_at(path)["accelerators"])


def accelerators() -> dict[str, Accelerator]:
    """By SKU, upper-cased: the datasheets of the one accelerators file
    (workers/accelerator_specs.py)."""
    return _accelerators_at(accelerator_specs.accelerators_file())


def sources() -> dict[str, list[dict[str, str]]]:
    """What each specification rests on, for the methodology page and the story."""
    return {
        "models": [
            {"name": m["name"], "source": m["source"]} for m in _load("models.json")["models"]
        ],
        "accelerators": [
            {"name": a["sku"], "source": a["source"], "note": a.get("note", "")}
            for a in accelerator_specs.entries()
        ],
    }


@cache
def inferencex_rows() -> tuple[dict[str, Any], ...]:
    """The shipped InferenceX snapshot (latest per configuration), as its API wrote it."""
    return tuple(json.loads((INFERENCEX_DIR / "benchmarks.json").read_text()))


@cache
def inferencex_history_rows() -> tuple[dict[str, Any], ...]:
    """InferenceX's history: earlier runs of the same configurations, one row per date."""
    return tuple(json.loads((INFERENCEX_DIR / "benchmarks-history.json").read_text()))


@cache
def glm52_cookbook() -> dict[str, Any]:
    """sglang cookbook's published GLM 5.2 cells (B200 FP8 and NVFP4, MI355X FP8; 8k/1k)."""
    return json.loads(GLM52_COOKBOOK_FILE.read_text())


@cache
def calibration_set() -> tuple[tuple[Observation, ...], dict[str, dict[str, int]]]:
    """calibration_observations, read once per process (pages fit the shipped point model
    on it)."""
    found, skipped = calibration_observations()
    return tuple(found), skipped


def calibration_observations() -> tuple[list[Observation], dict[str, dict[str, int]]]:
    """What the shipped calibration is computed from: every shipped model and configuration
    the model describes (InferenceX's DeepSeek-R1, latest and history; sglang cookbook's
    GLM 5.2 cells), and what was left out of each source and why, counted."""
    archs, accels = architectures(), accelerators()
    rows = validation.inferencex_all_rows(inferencex_rows(), inferencex_history_rows())
    ix, ix_skipped = validation.observations_from_inferencex(
        rows, architectures=archs, accelerators=accels
    )
    cb, cb_skipped = validation.observations_from_cookbook(
        glm52_cookbook(), architectures=archs, accelerators=accels
    )
    return ix + cb, {"inferencex": ix_skipped, "cookbook": cb_skipped}


def data_through() -> str:
    """The newest run date in the InferenceX data the calibration reads."""
    return max(r["date"] for r in [*inferencex_rows(), *inferencex_history_rows()])


@cache
def calibration_data() -> dict[str, Any]:
    """The shipped calibration artifact (apps/projections/calibration.py), read once."""
    return json.loads(CALIBRATION_FILE.read_text())


def write_calibration(artifact: dict[str, Any]) -> Path:
    CALIBRATION_FILE.write_text(json.dumps(artifact, indent=1, sort_keys=False) + "\n")
    return CALIBRATION_FILE
