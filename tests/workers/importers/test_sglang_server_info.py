"""sglang bench_serving's `server_info`: the model and deployment it states are the file's facts.

Cases start from real lines in tests/fixtures/wild/sglang-bench-serving (TonyLi15's
aggregated and prefill/decode runs) and change the fields each test is about, said in each.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from workers.importers import Facts, ImportFailure, facts_from_arguments, import_file
from workers.importers.common import MissingFacts

WILD = Path(__file__).resolve().parents[2] / "fixtures" / "wild" / "sglang-bench-serving"
AGGREGATED = WILD / "TonyLi15-sglang-benchmark_agg_n50_in128_out64_c8.jsonl"
DISAGGREGATED = WILD / "TonyLi15-sglang-benchmark_pd_intra_n50_in128_out64_c8.jsonl"
GH200_BF16 = {"accelerator": "GH200", "quantization": {"weights": "BF16"}}


def _line(path: Path) -> dict[str, Any]:
    return copy.deepcopy(json.loads(path.read_text().splitlines()[0], parse_constant=float))


def _import(line: dict[str, Any], facts: Facts) -> Any:
    [doc] = import_file(json.dumps(line).encode(), "bench.jsonl", facts=facts)
    return doc


def test_a_servers_arguments_state_the_model_engine_and_gpus_so_only_the_rest_is_asked():
    with pytest.raises(MissingFacts) as refusal:
        _import(_line(AGGREGATED), Facts())
    assert refusal.value.missing == ["deployment.accelerator", "deployment.quantization.weights"]


def test_tensor_and_pipeline_parallel_ranks_are_the_gpus_but_dp_replicas_are_left_to_facts():
    line = _line(AGGREGATED)
    line["server_info"].update(tp_size=4, pp_size=2)
    doc = _import(line, Facts.model_validate({"deployment": GH200_BF16}))
    assert doc.deployment.gpus == 8
    line["server_info"]["dp_size"] = 2  # GPUs per replica depend on DP attention: not read
    with pytest.raises(MissingFacts) as refusal:
        _import(line, Facts.model_validate({"deployment": GH200_BF16}))
    assert refusal.value.missing == ["deployment.gpus"]


def test_a_speculative_algorithm_the_server_states_is_the_method_and_none_means_none():
    line = _line(AGGREGATED)
    facts = Facts.model_validate({"deployment": GH200_BF16})
    assert _import(line, facts).deployment.speculative is None
    with pytest.raises(ImportFailure, match="deployment.speculative"):
        _import(line, Facts.model_validate({"deployment": {**GH200_BF16, "speculative":
                                                           {"method": "mtp"}}}))  # fmt: skip
    line["server_info"]["speculative_algorithm"] = "EAGLE3"
    assert _import(line, facts).deployment.speculative.method == "eagle3"


def test_a_pd_routers_answer_is_a_disaggregated_deployment_whose_pool_gpus_are_asked_once():
    line = _line(DISAGGREGATED)
    with pytest.raises(MissingFacts) as refusal:
        _import(line, Facts())
    assert refusal.value.missing == [
        "deployment.disaggregation.prefill_gpus",
        "deployment.disaggregation.decode_gpus",
        "deployment.accelerator",
        "deployment.quantization.weights",
    ]
    assert "--prefill-gpus N --decode-gpus N" in str(refusal.value)
    given = facts_from_arguments(
        {"prefill_gpus": 2, "decode_gpus": 4, "accelerator": "GH200", "weights": "BF16"}
    )
    doc = _import(line, given)
    assert doc.deployment.gpus == 6
    pools = doc.deployment.disaggregation
    assert (pools.prefill_gpus, pools.decode_gpus) == (2, 4)
    assert doc.model.name == line["server_info"]["prefill"][0]["served_model_name"]


def test_pool_gpus_that_do_not_add_up_to_the_given_total_are_refused():
    facts = Facts.model_validate(
        {"deployment": {**GH200_BF16, "gpus": 4,
                        "disaggregation": {"prefill_gpus": 1, "decode_gpus": 1}}}
    )  # fmt: skip
    with pytest.raises(ImportFailure, match=r"deployment.gpus is 4, but .* 1 \+ 1 = 2"):
        _import(_line(DISAGGREGATED), facts)


def test_servers_that_disagree_leave_the_model_and_layout_unstated():
    line = _line(DISAGGREGATED)
    line["server_info"]["decode"][0].update(served_model_name="other/model", tp_size=2)
    facts = Facts.model_validate(
        {"model": "some/model", "deployment": {**GH200_BF16,
                                               "disaggregation": {"prefill_gpus": 1,
                                                                  "decode_gpus": 2}}}
    )  # fmt: skip
    doc = _import(line, facts)
    assert doc.model.name == "some/model"  # from the facts: the file names two models
    assert doc.deployment.disaggregation.decode.tp == 2  # each pool as its servers say
    assert doc.deployment.disaggregation.prefill.tp == 1


def test_a_server_listed_under_the_wrong_role_is_refused():
    line = _line(DISAGGREGATED)
    line["server_info"]["decode"][0]["disaggregation_mode"] = "prefill"
    with pytest.raises(ImportFailure, match="server_info.decode server says"):
        _import(line, Facts())
