"""The row audit (workers/audit.py): each check on a document that breaks only it, with its
code and the figures' paths; the example measured run passes every check."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.conftest import example
from workers import audit
from workers import results as doc


def base() -> dict[str, Any]:
    body = copy.deepcopy(example())
    body["points"] = body["points"][:1]
    body["points"][0].pop("records", None)
    return body


def codes(body: dict[str, Any]) -> set[str]:
    return {reason.code for reason in audit.audit(doc.parse_document(body))}


def test_the_example_run_passes_every_check():
    assert audit.audit(doc.parse_document(base())) == []


def test_total_must_be_output_plus_input_within_the_stated_tolerance():
    body = base()
    tput = body["points"][0]["throughput"]
    within = 1 - audit.THROUGHPUT_IDENTITY_TOLERANCE / 2
    tput["total_tok_s"] = (tput["input_tok_s"] + tput["output_tok_s"]) * within
    assert "throughput_identity" not in codes(body)
    tput["total_tok_s"] = (tput["input_tok_s"] + tput["output_tok_s"]) * 0.5
    reasons = audit.audit(doc.parse_document(body))
    found = next(r for r in reasons if r.code == "throughput_identity")
    assert found.paths == (
        "points[0].throughput.total_tok_s",
        "points[0].throughput.output_tok_s",
        "points[0].throughput.input_tok_s",
    )


def test_the_input_output_ratio_is_checked_against_the_scenarios_lengths():
    body = base()
    tput = body["points"][0]["throughput"]
    # 20,000:1,000 asked; input stated at a tenth of that ratio.
    tput["input_tok_s"] = tput["output_tok_s"] * 2
    tput["total_tok_s"] = tput["input_tok_s"] + tput["output_tok_s"]
    assert "token_ratio" in codes(body)


def test_percentiles_out_of_order_in_a_stored_document_are_named():
    # The contract refuses them as they arrive; a document read back is checked too.
    parsed = doc.parse_document(base())
    parsed.points[0].latency_ms.ttft = doc.Distribution.model_construct(p50=500.0, p99=100.0)
    reasons = [r for r in audit.audit(parsed) if r.code == "percentile_order"]
    assert reasons and reasons[0].paths == (
        "points[0].latency_ms.ttft.p50",
        "points[0].latency_ms.ttft.p99",
    )


def test_a_figure_that_is_not_finite_is_named():
    parsed = doc.parse_document(base())
    parsed.points[0].throughput.output_tok_s = float("inf")
    reasons = audit.audit(parsed)
    assert [r.code for r in reasons] == ["not_finite"]
    assert reasons[0].paths == ("points[0].throughput.output_tok_s",)


def test_littles_law_holds_within_its_factor():
    body = base()
    p = body["points"][0]
    # 0.2 req/s x 5.15 s = 1.03 requests in flight at concurrency 1: holds.
    assert "littles_law" not in codes(body)
    p["throughput"]["requests_per_s"] = 0.2 * audit.LITTLE_FACTOR * 1.5
    assert "littles_law" in codes(body)


def test_littles_law_derives_the_rate_from_output_where_none_is_stated():
    body = base()
    p = body["points"][0]
    del p["throughput"]["requests_per_s"]
    parsed = doc.parse_document(body)
    ratio, rate, path = audit.littles_ratio(parsed, parsed.points[0])
    # 200 output tok/s over 1,000 tokens a request (counted: 2,000 over 2) = 0.2 req/s.
    assert rate == pytest.approx(0.2) and path == "throughput.output_tok_s"
    assert ratio == pytest.approx(0.2 * 5.150 / 1)


def test_an_open_loop_has_no_littles_law_check():
    body = base()
    p = body["points"][0]
    p["request_rate"] = 0.2
    p["throughput"]["requests_per_s"] = 50
    assert "littles_law" not in codes(body)


def test_disaggregated_pools_must_hold_their_workers():
    body = base()
    body["deployment"]["parallelism"] = {"tp": 4}
    body["deployment"]["disaggregation"] = {
        "prefill_gpus": 4,
        "decode_gpus": 4,
        "prefill": {"tp": 4, "workers": 2},
        "decode": {"tp": 4, "workers": 1},
    }
    reasons = [r for r in audit.audit(doc.parse_document(body))]
    assert [r.paths for r in reasons if r.code == "parallelism_above_gpus"] == [
        ("deployment.disaggregation.prefill_gpus", "deployment.disaggregation.prefill.tp")
    ]


def test_dp_attention_runs_on_the_tp_groups_own_gpus():
    body = base()
    body["deployment"]["parallelism"] = {"tp": 8, "dp": 8, "dp_attention": True}
    assert "parallelism_above_gpus" not in codes(body)


def test_every_code_has_a_description_and_the_methodology_names_it():
    from pathlib import Path

    methodology = (Path(audit.__file__).parents[1] / "docs" / "methodology.md").read_text()
    for code in audit.CODES:
        assert f"`{code}`" in methodology, code
