"""InferenceX's launch recipes, a shipped snapshot of its public configuration files
(inferencex_recipes/SOURCES.md), and the join of an InferenceX row to the recipe it was
launched by. A row's flags are its recipe's: the API's rows state none."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from workers.importers.common import drop_none

RECIPES_FILE = Path(__file__).with_name("inferencex_recipes") / "recipes.json"

# A recipe that passes the row's expert parallelism through (`--ep-size $EP_SIZE`, as it
# takes TP as `$TP`) states "ep": "$EP_SIZE" and is the recipe of a row of any EP; one that
# sets none states 1. DP attention is always a boolean: a script that branches on it has one
# entry per branch, since the branches launch differently.
ROWS_EP = "$EP_SIZE"


@functools.cache
def _recipes() -> tuple[dict[str, Any], dict[tuple, dict[str, Any]]]:
    data = json.loads(RECIPES_FILE.read_text())
    by_key = {}
    for recipe in data["recipes"]:
        by_key[recipe_key(recipe)] = recipe
    return data, by_key


def recipe_key(recipe: dict[str, Any]) -> tuple:
    """What a recipe is joined by (its "ep" may be `ROWS_EP`: the row's, whatever it is)."""
    shape = recipe["parallelism"]
    return (
        recipe["framework"],
        recipe["hardware"],
        recipe["model"],
        recipe["precision"],
        recipe["spec_method"],
        shape["ep"],
        shape["dp_attention"],
    )


def recipe_of(row: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """(the shipped recipe the row was launched by, or None; what the run says of it).

    Joined by framework, accelerator, model, precision, speculative method and parallelism:
    the shipped recipes are single-node ones that take TP from the row, and EP where they say
    so, so a disaggregated or multi-node row has none of them, nor has a row whose EP or DP
    attention its configuration's recipe does not launch."""
    data, by_key = _recipes()
    what = (
        f"{row['framework']} {row['hardware']} {row['model']} {row['precision']} "
        f"spec {row['spec_method']} TP{row['decode_tp']} EP{row['decode_ep']}"
        f"{' DP-attention' if row['decode_dp_attention'] else ''}"
        f"{' disaggregated' if row['disagg'] else ''}{' multi-node' if row['is_multinode'] else ''}"
    )
    recipe = None
    if not row["disagg"] and not row["is_multinode"]:
        key = (
            row["framework"],
            row["hardware"],
            row["model"],
            row["precision"],
            row["spec_method"] or "none",
            row["decode_ep"],
            bool(row["decode_dp_attention"]),
        )
        recipe = by_key.get(key) or by_key.get((*key[:5], ROWS_EP, key[6]))
    if recipe is None:
        return None, f"no shipped InferenceX recipe matches {what}"
    return recipe, f"{data['repository']}/{recipe['path']}@{recipe['commit']}"


def recipe_extra(row: dict[str, Any]) -> dict[str, Any]:
    """What a run keeps of its recipe: where it is (repository, path, commit) and the
    environment it exports, or why none matched."""
    recipe, said = recipe_of(row)
    if recipe is None:
        return {"missing": said}
    data, _ = _recipes()
    return drop_none(
        {
            "repository": data["repository"],
            "path": recipe["path"],
            "commit": recipe["commit"],
            "url": f"https://github.com/{data['repository']}/blob/{recipe['commit']}/"
            f"{recipe['path']}",
            "env": recipe.get("env"),
            "variables": recipe.get("variables"),
        }
    )


# sglang's --kv-cache-dtype values and the precision each stores (its server_args choices);
# "auto" is the model's own dtype, which the flag does not say.
KV_CACHE_DTYPES = {"fp8_e4m3": "FP8", "fp8_e5m2": "FP8", "fp4_e2m1": "FP4", "bf16": "BF16"}


def flag_value(flags: list[str], name: str) -> str | None:
    """The value a recipe's flags give `name` (`--name value` or `--name=value`), or None."""
    for flag in flags:
        key, _, value = flag.replace("=", " ", 1).partition(" ")
        if key == name:
            return value.strip().strip("\"'") or None
    return None


def recipe_facts(recipe: dict[str, Any], deployment: dict[str, Any]) -> dict[str, Any]:
    """The deployment's sections with what the recipe states beside its flags: the KV cache's
    precision (`--kv-cache-dtype`) and the speculative draft tokens. Only stated values: a
    flag left at "auto", or a script that does not say, adds nothing."""
    updates: dict[str, Any] = {}
    kv = KV_CACHE_DTYPES.get(flag_value(recipe["flags"], "--kv-cache-dtype") or "")
    if kv:
        updates["quantization"] = {**deployment["quantization"], "kv_cache": kv}
    draft = recipe.get("spec_draft_tokens")
    if draft is None:
        stated = flag_value(recipe["flags"], "--speculative-num-draft-tokens") or ""
        draft = int(stated) if stated.isdigit() else None
    if deployment.get("speculative") and isinstance(draft, int) and draft > 0:
        updates["speculative"] = {**deployment["speculative"], "draft_tokens": draft}
    return updates
