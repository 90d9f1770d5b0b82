"""InferenceX's launch recipes (workers/importers/inferencex_recipes/), joined to the shipped
rows: a row launched by a shipped recipe carries its flags and passes the flags rule; one
without stays not checked and its run says why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from apps.imports.services import import_ingest
from apps.trust import rules
from workers.importers import inferencex_api, inferencex_recipe

SNAPSHOT = Path(__file__).parents[3] / "apps" / "catalog" / "reference" / "inferencex"
SOURCE = inferencex_api.Source(description="test")


def _documents():
    latest = json.loads((SNAPSHOT / "benchmarks.json").read_bytes())
    history = json.loads((SNAPSHOT / "benchmarks-history.json").read_bytes())
    rows = inferencex_api.merged(
        inferencex_api.benchmark_rows(latest, "latest"),
        inferencex_api.benchmark_rows(history, "history"),
    )
    return inferencex_api.document_rows(rows, source=SOURCE)


def _flags_failure(document) -> list[rules.Failure]:
    deployment = document.model_dump(mode="json", exclude_none=True)["deployment"]
    data = rules.RuleInput(deployment=deployment, points=[], best_point_id=None, min_success_rate=1)
    return [f for f in rules.check(data) if f.rule == "engine_flags_disclosed"]


def _recipes() -> list[dict]:
    return json.loads(inferencex_recipe.RECIPES_FILE.read_text())["recipes"]


def _shipped_rows() -> list[dict]:
    return [
        row
        for name in ("benchmarks.json", "benchmarks-history.json")
        for row in json.loads((SNAPSHOT / name).read_bytes())
    ]


def test_every_shipped_row_with_a_recipe_carries_its_flags_and_passes_the_flags_rule():
    # A script that branches on DP attention has an entry per branch, at one path and commit.
    flags: dict[tuple[str, str], list] = {}
    for r in _recipes():
        flags.setdefault((r["path"], r["commit"]), []).append(r["flags"])
    with_recipe = without = 0
    accelerators = set()
    for document in _documents():
        recipe = document.environment.extra["inferencex"]["recipe"]
        if "missing" in recipe:
            without += 1
            # Every single-node row has its recipe: only disaggregated or multi-node ones lack one.
            assert document.deployment.disaggregation or document.deployment.multinode
            assert document.deployment.engine_flags == []
            assert [f.reason for f in _flags_failure(document)] == ["no engine flags stated"]
            assert recipe["missing"].startswith("no shipped InferenceX recipe matches ")
            continue
        with_recipe += 1
        accelerators.add(document.deployment.accelerator)
        assert document.deployment.engine_flags in flags[(recipe["path"], recipe["commit"])]
        assert recipe["url"].endswith(f"/blob/{recipe['commit']}/{recipe['path']}")
        assert _flags_failure(document) == []
    assert with_recipe and without
    assert accelerators == {"MI355X", "MI300X", "MI325X", "H200", "B200", "B300"}


def test_every_recipe_is_one_configuration_and_launched_some_shipped_row():
    recipes = _recipes()
    keys = [inferencex_recipe.recipe_key(r) for r in recipes]
    assert len(set(keys)) == len(keys)
    joined = {
        inferencex_recipe.recipe_key(recipe)
        for recipe in (inferencex_recipe.recipe_of(row)[0] for row in _shipped_rows())
        if recipe is not None
    }
    assert joined == set(keys)
    for recipe in recipes:
        assert len(recipe["commit"]) == 40 and int(recipe["commit"], 16) >= 0
        assert recipe["parallelism"]["ep"] in (1, inferencex_recipe.ROWS_EP)
        assert isinstance(recipe["parallelism"]["dp_attention"], bool)
        if "spec_draft_tokens" in recipe:
            assert recipe["spec_method"] != "none"
            assert type(recipe["spec_draft_tokens"]) is int and recipe["spec_draft_tokens"] >= 1


def test_a_row_is_joined_by_its_parallelism_not_only_its_engine_and_accelerator():
    row = json.loads((SNAPSHOT / "benchmarks.json").read_bytes())[0]
    assert (row["framework"], row["hardware"], row["precision"]) == ("sglang", "mi355x", "fp4")
    assert inferencex_recipe.recipe_of(row)[0] is not None
    for change in ({"decode_ep": 8}, {"decode_dp_attention": True}, {"disagg": True}):
        recipe, why = inferencex_recipe.recipe_of({**row, **change})
        assert recipe is None
        assert why.startswith("no shipped InferenceX recipe matches sglang mi355x dsr1 fp4")


def test_a_recipe_that_passes_ep_through_joins_any_ep_and_dp_attention_picks_its_branch():
    rows = _shipped_rows()
    b200 = next(
        r
        for r in rows
        if (r["framework"], r["hardware"], r["precision"], r["spec_method"], r["disagg"])
        == ("sglang", "b200", "fp4", "none", False)
    )
    recipe = inferencex_recipe.recipe_of(b200)[0]
    assert recipe["parallelism"]["ep"] == inferencex_recipe.ROWS_EP
    assert "--ep-size $EP_SIZE" in recipe["flags"]
    for ep in (1, 4, 8):
        assert inferencex_recipe.recipe_of({**b200, "decode_ep": ep})[0] is recipe
    assert inferencex_recipe.recipe_of({**b200, "decode_dp_attention": True})[0] is None

    trt = next(
        r
        for r in rows
        if (r["framework"], r["hardware"], r["precision"], r["spec_method"], r["disagg"])
        == ("trt", "b200", "fp4", "mtp", False)
    )
    plain = inferencex_recipe.recipe_of({**trt, "decode_dp_attention": False})[0]
    dp = inferencex_recipe.recipe_of({**trt, "decode_dp_attention": True})[0]
    assert plain["path"] == dp["path"] == "benchmarks/single_node/dsr1_fp4_b200_trt_mtp.sh"
    assert (plain["spec_draft_tokens"], dp["spec_draft_tokens"]) == (3, 1)


@pytest.mark.django_db
def test_a_runs_page_links_its_recipe_or_says_why_it_has_none(client):
    latest = json.loads((SNAPSHOT / "benchmarks.json").read_bytes())
    launched = next(r for r in latest if inferencex_recipe.recipe_of(r)[0])
    unknown = next(r for r in latest if not inferencex_recipe.recipe_of(r)[0])
    outcome = import_ingest(
        data=json.dumps([launched, unknown]).encode(), filename="benchmarks.json", org=None
    )
    runs = {
        r.run.document["environment"]["extra"]["inferencex"]["rows"][0]: r.run
        for r in outcome.results
    }
    assert len(runs) == 2
    recipe, _ = inferencex_recipe.recipe_of(launched)
    for run in runs.values():
        html = client.get(f"/runs/{run.pk}/").content.decode()
        said = run.document["environment"]["extra"]["inferencex"]["recipe"]
        rules_failed = [f["rule"] for f in run.rules_failed]
        if "missing" in said:
            assert said["missing"] in html
            assert "engine_flags_disclosed" in rules_failed
        else:
            assert f'href="{said["url"]}"' in html and recipe["path"] in said["url"]
            assert "engine_flags_disclosed" not in rules_failed
            assert run.deployment.engine_flags == recipe["flags"]
