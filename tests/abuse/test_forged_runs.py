"""Forged runs (issue 53): each document of the hostile re-probe whose facts or figures
contradict each other, or exceed what the hardware can do, is refused by POST /api/v1/runs
with a 422 naming the figures, and nothing is stored; a forged run that breaks no check is
self-reported, and stays off the default board and /costs/ until a reviewer approves it."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from apps.runs.models import Run
from apps.runs.services import runs_version_bump
from apps.trust.services import review_decide, review_propose
from tests.conftest import example

pytestmark = pytest.mark.django_db


def base() -> dict[str, Any]:
    """The example measured run, one level, no records: a document that passes the audit."""
    body = copy.deepcopy(example())
    body["points"] = body["points"][:1]
    body["points"][0].pop("records", None)
    return body


def point(body: dict[str, Any]) -> dict[str, Any]:
    return body["points"][0]


def tp16_on_8(body):
    body["deployment"]["parallelism"] = {"tp": 16}


def tp8_pp4_dp8_on_8(body):
    body["deployment"]["parallelism"] = {"tp": 8, "pp": 4, "dp": 8}


def sixteen_nodes_for_8(body):
    body["deployment"]["nodes"] = 16


def output_above_total(body):
    point(body)["throughput"] = {"output_tok_s": 5000, "total_tok_s": 1800}


def ttft_above_e2el(body):
    point(body)["latency_ms"] = {"ttft": {"p50": 9000}, "e2el": {"p50": 5000}}


def e2el_below_decode(body):
    # 1,000 output tokens a request (2,000 over 2): E2EL must be at least TTFT + 999 TPOT.
    point(body)["latency_ms"] = {
        "ttft": {"mean": 100, "p50": 100},
        "tpot": {"mean": 1.0, "p50": 1.0},
        "e2el": {"mean": 100 + 999 - 300, "p50": 100 + 999 - 300},
    }
    point(body)["interactivity_tok_s_user"] = {"p50": 1000}


def tok_s_1e308(body):
    point(body)["throughput"] = {"output_tok_s": 1e308, "total_tok_s": 1e308}


def ten_requests_9e6(body):
    p = point(body)
    p.update(window_s=60, requests={"total": 10, "succeeded": 10, "failed": 0})
    p["tokens"] = {"input": 200_000, "output": 10_000}
    p["throughput"] = {"output_tok_s": 9e6, "total_tok_s": 9e6}


def interactivity_1e6(body):
    point(body)["interactivity_tok_s_user"] = {"p50": 1e6}
    point(body)["latency_ms"]["tpot"] = {"mean": 5, "p50": 5}


def accuracy_n0(body):
    body["accuracy"] = [
        {
            "protocol": "gsm8k-5shot-v1",
            "task": "gsm8k",
            "metric": "exact_match_numeric",
            "n": 0,
            "score": 0.99,
        }
    ]


def half_a_million_on_one_h200(body):
    body["model"] = {"name": "DeepSeek-R1-0528"}
    body["deployment"].update(
        accelerator="H200",
        gpus=1,
        parallelism={"tp": 1},
        quantization={"weights": "FP8", "activations": "FP8", "kv_cache": "FP8"},
    )
    body["deployment"].pop("speculative")
    point(body)["throughput"] = {"output_tok_s": 5e5, "total_tok_s": 5e5}


FORGED: list[tuple[Callable[[dict], None], str, str]] = [
    # (forgery, the reason's code, a figure the 422 must name)
    (tp16_on_8, "parallelism_above_gpus", "deployment.parallelism.tp"),
    (tp8_pp4_dp8_on_8, "parallelism_above_gpus", "deployment.parallelism.pp"),
    (sixteen_nodes_for_8, "nodes_above_gpus", "deployment.nodes"),
    (output_above_total, "output_above_total", "points[0].throughput.total_tok_s"),
    (ttft_above_e2el, "ttft_above_e2el", "points[0].latency_ms.e2el.p50"),
    (e2el_below_decode, "e2el_below_decode", "points[0].latency_ms.tpot.mean"),
    (tok_s_1e308, "physical_ceiling", "points[0].throughput.total_tok_s"),
    (ten_requests_9e6, "throughput_unreachable", "points[0].tokens.output"),
    (interactivity_1e6, "interactivity_tpot", "points[0].interactivity_tok_s_user.p50"),
    (accuracy_n0, "accuracy_empty", "accuracy[0].n"),
    (half_a_million_on_one_h200, "physical_ceiling", "deployment.accelerator"),
]


def post(client, body: dict, auth: dict[str, str]):
    return client.post(
        "/api/v1/runs", data=json.dumps(body), content_type="application/json", **auth
    )


def test_the_base_document_passes_every_check(client, auth):
    assert post(client, base(), auth).status_code == 201


@pytest.mark.parametrize(("forge", "code", "figure"), FORGED, ids=[f[0].__name__ for f in FORGED])
def test_a_forged_document_is_refused_naming_the_contradiction(client, auth, forge, code, figure):
    body = base()
    forge(body)
    response = post(client, body, auth)
    assert response.status_code == 422, response.content
    detail = response.json()["detail"]
    named = [d for d in detail if f"[{code}:" in d["message"]]
    assert named, detail
    # The figures involved are named: the first as the error's path, all in its message.
    assert any(figure == d["path"] or figure in d["message"] for d in named), named
    assert not Run.objects.exists()


def test_the_physical_ceiling_names_its_bound(client, auth):
    body = base()
    half_a_million_on_one_h200(body)
    detail = post(client, body, auth).json()["detail"]
    message = next(d["message"] for d in detail if "[physical_ceiling:" in d["message"])
    assert "DeepSeek-R1 on H200" in message and "margin" in message


def board_lists(client, run: Run) -> bool:
    page = client.get("/", {"model": "GLM 5.2", "scenario": "seed-20k-1k-60"})
    return f'href="/runs/{run.pk}/"' in page.content.decode()


def costs_lists(client, run: Run) -> bool:
    page = client.get("/costs/", {"model": "GLM 5.2"})
    return f'href="/runs/{run.pk}/"' in page.content.decode()


def test_a_forged_run_that_passes_the_checks_stays_off_the_default_views_until_approved(
    client, auth
):
    body = base()
    # Forged, but consistent with itself and under the ceiling: three times the example's
    # requests, tokens and rates at three times its concurrency (the same latencies).
    p = point(body)
    p["concurrency"] *= 3
    p["requests"] = {k: v * 3 for k, v in p["requests"].items()}
    p["throughput"] = {k: v * 3 for k, v in p["throughput"].items()}
    p["tokens"] = {k: v * 3 if isinstance(v, int) else v for k, v in p["tokens"].items()}
    response = post(client, body, auth)
    assert response.status_code == 201, response.content
    run = Run.objects.get(pk=response.json()["id"])
    assert run.origin == "submitted" and run.is_public and not run.audit_reasons
    assert not board_lists(client, run) and not costs_lists(client, run)
    assert Run.objects.get(pk=run.pk).rules_passed  # it passes every rule: only review waits
    # The board says how many wait, and a visitor may include them, labelled.
    page = client.get("/", {"model": "GLM 5.2", "scenario": "seed-20k-1k-60"}).content.decode()
    assert "1 self-reported run waits for review" in page
    shown = client.get(
        "/", {"model": "GLM 5.2", "scenario": "seed-20k-1k-60", "unchecked": "1"}
    ).content.decode()
    assert f'href="/runs/{run.pk}/"' in shown and "awaiting review" in shown
    costs = client.get("/costs/", {"model": "GLM 5.2"}).content.decode()
    assert "1 self-reported run waits for review" in costs
    included = client.get("/costs/", {"model": "GLM 5.2", "unreviewed": "1"}).content.decode()
    assert f'href="/runs/{run.pk}/"' in included and "awaiting review" in included

    review = review_propose(run=run, actor="owner@example.com")
    review_decide(review=review, approve=True, reason="checked by hand", actor="staff")
    runs_version_bump()  # as the decision's commit does (a test's transaction never commits)
    assert board_lists(client, run) and costs_lists(client, run)
