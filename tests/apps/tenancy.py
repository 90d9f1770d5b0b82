"""A private run whose every name carries one unique string, for tenancy tests: a page shown
to another organization or to an anonymous visitor, or an MCP tool's answer to them, must never
contain that string."""

from typing import Any

from apps.runs.models import Run
from tests.factories import document
from tests.reviews import ingest_reviewed

SECRET = "zq81hush"


def private_document() -> dict[str, Any]:
    made = document(model=f"Model {SECRET}", engine_version=f"7.7.7-{SECRET}")
    made["scenario"] = {
        "name": f"Scenario {SECRET}",
        "input_tokens": 3333,
        "output_tokens": 777,
        "prefix_cache_hit_rate": 0,
    }
    return made


def private_run(org) -> Run:
    run = ingest_reviewed(document=private_document(), org=org, is_public=False).run
    assert run.scenario.slug == f"scenario-{SECRET}"
    return run


def leaks(text: str) -> bool:
    return SECRET in text.lower()


def private_endpoint(org, run: Run):
    """The organization's endpoint serving the private run's deployment, named with the secret
    (its name, URL and served model name): no caller outside the organization may see them."""
    from apps.jobs.models import Endpoint

    return Endpoint.objects.create(
        org=org,
        deployment=run.deployment,
        name=f"Endpoint {SECRET}",
        url=f"http://127.0.0.1:9/{SECRET}/v1",
        served_model=f"served-{SECRET}",
        pool="pool.hush",
        is_public=False,
    )


def mcp_questions(run_id: int, secret: str = SECRET) -> dict[str, list[dict[str, Any]]]:
    """Arguments for each MCP tool (apps/agents) naming the private run's model, scenario and
    id (with `secret` and `run_id` in their place: the same questions about names that do not
    exist), and questions naming none, whose answers list what the caller may see."""
    model, scenario = f"Model {secret}", f"scenario-{secret}"
    pair = {"a": "MI355X", "b": "B200"}
    return {
        "answer": [
            {"model": model, "scenario": scenario, **pair},
            {"model": "GLM 5.2", "scenario": scenario, **pair},
            {"model": model, "scenario": "seed-20k-1k-60", **pair},
        ],
        "board": [
            {},
            {"unchecked": True},
            {"model": "no-such-model"},  # refused with the models the caller may name
            {"model": model},
            {"scenario": scenario},
        ],
        "run": [{"run_id": run_id}],
        "search_runs": [{}, {"engine": "sglang"}, {"model": model}, {"scenario": scenario}],
        "costs": [
            {"model": "GLM 5.2", "min_success_pct": 0},
            {"model": model, "min_success_pct": 0},
            {"model": "GLM 5.2", "scenario": scenario},
        ],
        # A write, so asked once, last: what it answers is about the caller's own run.
        "submit_run": [{"document": document(model="GLM 5.2")}],
    }
