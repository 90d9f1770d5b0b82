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


def test_every_shipped_row_with_a_recipe_carries_its_flags_and_passes_the_flags_rule():
    data = json.loads(inferencex_recipe.RECIPES_FILE.read_text())
    flags = {r["path"]: r["flags"] for r in data["recipes"]}
    with_recipe = without = 0
    accelerators = set()
    for document in _documents():
        recipe = document.environment.extra["inferencex"]["recipe"]
        if "missing" in recipe:
            without += 1
            assert document.deployment.engine_flags == []
            assert [f.reason for f in _flags_failure(document)] == ["no engine flags stated"]
            assert recipe["missing"].startswith("no shipped InferenceX recipe matches ")
            continue
        with_recipe += 1
        accelerators.add(document.deployment.accelerator)
        assert document.deployment.engine_flags == flags[recipe["path"]]
        assert recipe["url"].endswith(f"/blob/{recipe['commit']}/{recipe['path']}")
        assert _flags_failure(document) == []
    assert with_recipe and without
    assert accelerators == {"MI355X", "MI300X", "MI325X", "H200"}


def test_a_row_is_joined_by_its_parallelism_not_only_its_engine_and_accelerator():
    row = json.loads((SNAPSHOT / "benchmarks.json").read_bytes())[0]
    assert (row["framework"], row["hardware"], row["precision"]) == ("sglang", "mi355x", "fp4")
    assert inferencex_recipe.recipe_of(row)[0] is not None
    for change in ({"decode_ep": 8}, {"decode_dp_attention": True}, {"disagg": True}):
        recipe, why = inferencex_recipe.recipe_of({**row, **change})
        assert recipe is None
        assert why.startswith("no shipped InferenceX recipe matches sglang mi355x dsr1 fp4")


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
