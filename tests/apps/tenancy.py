"""A private run whose every name carries one unique string, for tenancy tests: a page shown
to another organization or to an anonymous visitor must never contain that string."""

from typing import Any

from apps.runs.models import Run
from apps.runs.services import run_ingest
from tests.factories import document

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
    run = run_ingest(document=private_document(), org=org, is_public=False).run
    assert run.scenario.slug == f"scenario-{SECRET}"
    return run


def leaks(text: str) -> bool:
    return SECRET in text.lower()
