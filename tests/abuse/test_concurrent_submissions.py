"""Many clients at once, as a plain HTTP client sends them: nothing is lost to a race."""

from __future__ import annotations

import copy
import threading
from concurrent.futures import ThreadPoolExecutor

import httpx

from tests.conftest import example

CLIENTS = 20


def test_twenty_concurrent_submissions_for_one_new_deployment_store_twenty_runs(site):
    from apps.catalog.models import Deployment
    from apps.runs.models import Run

    documents = []
    for n in range(CLIENTS):
        document = copy.deepcopy(example())
        document["idempotency_key"] = f"abuse-race-{n}"
        # A deployment, accelerator and scenario no earlier run created: every client races
        # to create the same catalog rows.
        document["model"]["name"] = "race/new-model"
        document["deployment"]["accelerator"] = "RACE-1"
        document["scenario"].pop("preset", None)
        document["scenario"]["name"] = "race scenario"
        documents.append(document)
    # All clients send together: none starts before every thread is ready.
    barrier = threading.Barrier(CLIENTS)

    def submit(document: dict) -> int:
        with httpx.Client(timeout=120) as client:
            barrier.wait()
            return client.post(f"{site.url}/api/v1/runs", json=document, headers=site.auth)

    with ThreadPoolExecutor(CLIENTS) as pool:
        answers = list(pool.map(submit, documents))
    assert [a.status_code for a in answers] == [201] * CLIENTS, [
        a.text[:300] for a in answers if a.status_code != 201
    ]
    assert len({a.json()["id"] for a in answers}) == CLIENTS
    assert Run.objects.filter(idempotency_key__startswith="abuse-race-").count() == CLIENTS
    assert Deployment.objects.filter(model__name="race/new-model").count() == 1
