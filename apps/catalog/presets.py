"""Scenario presets every installation has (created by a data migration), and scenario shapes."""

from workers.loadgen.session_shapes import SESSION_PRESETS, mean_context_tokens, session_dataset
from workers.scenario_presets import SCENARIO_PRESETS

# The facts that make a scenario's shape: `shape_key`'s arguments, the columns a scenario
# row stores them in, and what a job's scenario tells the worker.
SHAPE_FIELDS = (
    "input_tokens",
    "output_tokens",
    "length_spread",
    "prefix_cache_hit_rate",
    "dataset",
    "arrival",
)


def shape_of(scenario: object) -> dict:
    """A scenario's shape facts, from anything that has them as attributes (a row, a
    result document's scenario)."""
    return {name: getattr(scenario, name) for name in SHAPE_FIELDS}


def shape_key(
    *,
    input_tokens: int,
    output_tokens: int,
    length_spread: float | None = 0,
    prefix_cache_hit_rate: float | None = 0,
    dataset: str = "random",
    arrival: str = "closed",
    suffix: str = "",
) -> str:
    """A scenario's identity. A value the source did not state (None) is spelled "?": such a
    run gets a shape of its own and never joins one that states 0, since nobody said it was 0.
    """
    key = (
        f"{input_tokens}/{output_tokens}/spread={_stated(length_spread)}/"
        f"prefix={_stated(prefix_cache_hit_rate)}/{dataset}/{arrival}"
    )
    return f"{key}/{suffix}" if suffix else key


def _stated(value: float | None) -> str:
    return "?" if value is None else f"{value:g}"


# The single-turn presets are the workers' table (one definition for the CLI and the server).
PRESETS: list[dict] = [dict(preset) for preset in SCENARIO_PRESETS]


# Multi-turn presets: their conversation parameters live in workers/loadgen/session_shapes.py
# (one place); the catalog keeps the mean context, the answer length and the dataset name
# that spells out every parameter.
PRESETS += [
    {
        "slug": slug,
        "name": f"{slug}: {shape.turns} turns, {shape.system_tokens}+{shape.first_tokens} "
        f"then +{shape.turn_tokens} in / {shape.output_tokens} out per turn",
        "input_tokens": mean_context_tokens(shape),
        "output_tokens": shape.output_tokens,
        "dataset": session_dataset(shape),
        "concurrency": [1, 4, 16],
    }
    for slug, shape in SESSION_PRESETS.items()
]


def preset_row(definition: dict) -> dict:
    """The Scenario fields of a preset definition, shape key included."""
    fields = {k: v for k, v in definition.items() if k not in {"slug", "shape_suffix"}}
    key = shape_key(
        input_tokens=definition["input_tokens"],
        output_tokens=definition["output_tokens"],
        prefix_cache_hit_rate=definition.get("prefix_cache_hit_rate", 0),
        dataset=definition.get("dataset", "random"),
        suffix=definition.get("shape_suffix", ""),
    )
    return {**fields, "shape_key": key, "is_preset": True}
