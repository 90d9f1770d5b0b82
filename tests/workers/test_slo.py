import pytest

from tests.slo_cases import CASES, Case
from workers import result_facts, results, slo
from workers.results import DocumentError, parse_document
from workers.slo import Bound, Slo, SloError, judge, percentile_name, point_figures, stored_key


def verdict_of(case: Case) -> slo.Verdict:
    rule = result_facts.Slo.model_validate(case.slo).rule()
    point = results.Point.model_validate(case.point)
    figures = point_figures(
        point.latency_ms.model_dump(exclude_none=True),
        point.interactivity_tok_s_user.model_dump(exclude_none=True)
        if point.interactivity_tok_s_user
        else {},
    )
    requests = point.requests
    return judge(rule, figures, requests.succeeded / requests.total)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_the_verdict_table(case: Case):
    verdict = verdict_of(case)
    assert verdict.status == case.status, verdict.describe()
    assert case.detail in verdict.describe()


@pytest.mark.parametrize(
    ("spelled", "canonical", "stored"),
    [(99, "p99", "p99"), (99.9, "p99.9", "p999"), ("p999", "p99.9", "p999"), ("50", "p50", "p50")],
)
def test_a_percentile_is_spelled_one_way_and_stored_under_one_key(spelled, canonical, stored):
    assert percentile_name(spelled) == canonical
    assert stored_key(spelled) == stored


def test_a_percentile_that_is_not_stored_names_the_stored_ones():
    with pytest.raises(SloError, match="p50, p90, p95, p99, p99.9"):
        percentile_name("p75")


def test_a_document_asking_for_an_unstored_percentile_is_refused_with_its_path():
    slo_doc = {"ttft_ms": 100, "ttft_percentile": 75}
    with pytest.raises(DocumentError) as error:
        parse_document(
            {
                "idempotency_key": "test-key-1",
                "provenance": "measured",
                "model": {"name": "m"},
                "deployment": {
                    "accelerator": "H200",
                    "gpus": 1,
                    "engine": {"name": "vllm"},
                    "quantization": {"weights": "BF16"},
                },
                "scenario": {"input_tokens": 10, "output_tokens": 10, "slo": slo_doc},
                "points": [{"throughput": {"output_tok_s": 1}}],
            }
        )
    assert error.value.errors[0][0] == "scenario.slo.ttft_percentile"
    assert "p99.9" in error.value.errors[0][1]


def test_an_old_document_slo_means_every_bound_at_its_ttft_percentile():
    rule = result_facts.Slo(ttft_ms=100, tpot_ms=50, e2el_ms=900, ttft_percentile=90).rule()
    assert [(b.metric, b.percentile, b.limit, b.unit) for b in rule.bounds] == [
        ("ttft", "p90", 100, "ms"),
        ("tpot", "p90", 50, "ms"),
        ("e2el", "p90", 900, "ms"),
    ]
    assert rule.min_success_rate == 0.99


def test_a_bound_in_the_wrong_unit_is_refused():
    with pytest.raises(SloError, match="ms or s"):
        Bound("ttft", "p99", 1, "tok/s/user")


def test_a_request_without_tpot_is_not_held_to_a_tpot_bound():
    rule = Slo((Bound("ttft", "p99", 100), Bound("tpot", "p99", 10)))
    assert slo.request_meets(rule, ttft_ms=50, tpot_ms=None, e2el_ms=60)
    assert not slo.request_meets(rule, ttft_ms=50, tpot_ms=11, e2el_ms=60)
    assert not slo.request_meets(rule, ttft_ms=101, tpot_ms=1, e2el_ms=200)


def test_a_point_that_states_no_success_rate_is_judged_on_its_bounds_and_marked():
    rule = Slo((Bound("ttft", "p99", 2, "s"),), min_success_rate=0.99)
    fast = {"ttft": {"p99": 1500.0}}
    verdict = judge(rule, fast, None)
    assert (verdict.status, verdict.success_unstated) == ("meets", True)
    assert verdict.describe().endswith("(success not stated)")
    # Not stating it is no licence: a bound it breaks still misses.
    slow = judge(rule, {"ttft": {"p99": 2500.0}}, None)
    assert (slow.status, slow.success_unstated) == ("misses", True)
    # A point that states it is judged on it, and is not marked.
    stated = judge(rule, fast, 0.5)
    assert (stated.status, stated.success_unstated) == ("misses", False)
