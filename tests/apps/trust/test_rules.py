"""The board's rules, each named when it fails (apps/trust/rules.py), and what the pages and
the default board do with a run that fails one."""

import copy
import csv
import io

import pytest

from apps.runs.services import run_ingest
from apps.trust import rules
from apps.trust.services import run_rules_refresh
from tests.factories import document
from tests.reviews import approved

pytestmark = pytest.mark.django_db

GSM = {"protocol": "gsm8k-5shot-v1", "task": "gsm8k", "metric": "exact_match_numeric"}


def rows_of(response) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(response.content.decode())))


def failed(run) -> list[str]:
    return [f["rule"] for f in run.rules_failed]


def test_a_run_with_complete_facts_passes_every_rule(org):
    run = run_ingest(document=document(), org=org).run
    assert run.rules_failed == [] and run.rules_passed


@pytest.mark.parametrize(
    ("path", "missing"),
    [
        (("engine", "image_digest"), "engine.image_digest"),
        (("engine", "version"), "engine.version"),
        (("quantization", "activations"), "quantization.activations"),
        (("quantization", "kv_cache"), "quantization.kv_cache"),
        (("parallelism", "tp"), "parallelism"),
    ],
)
def test_each_missing_fact_is_named(org, path, missing):
    doc = document()
    del doc["deployment"][path[0]][path[1]]
    run = run_ingest(document=doc, org=org).run
    assert failed(run) == ["facts_complete"]
    assert missing in run.rules_failed[0]["reason"]
    assert not run.rules_passed


def test_speculative_decoding_must_state_its_draft_tokens(org):
    doc = document()
    doc["deployment"]["speculative"] = {"method": "mtp"}
    run = run_ingest(document=doc, org=org).run
    assert failed(run) == ["facts_complete"]
    assert "speculative.draft_tokens" in run.rules_failed[0]["reason"]


def test_undisclosed_engine_flags_fail(org):
    doc = document()
    doc["deployment"]["engine_flags"] = []
    assert failed(run_ingest(document=doc, org=org).run) == ["engine_flags_disclosed"]


def test_unreported_prompt_lengths_and_client_load_fail(org):
    doc = document()
    for p in doc["points"]:
        del p["prompt_length_mismatch_rate"]
        del p["client_bound"]
    run = run_ingest(document=doc, org=org).run
    assert failed(run) == ["prompt_lengths_matched", "client_not_bound"]


def test_a_client_bound_sweep_has_no_point_that_can_rank(org):
    doc = document()
    for p in doc["points"]:
        p["client_bound"] = True
    run = run_ingest(document=doc, org=org).run
    assert failed(run) == ["client_not_bound"]
    assert "every point" in run.rules_failed[0]["reason"]


def test_a_quantized_deployment_without_accuracy_fails(org):
    run = run_ingest(document=document(quantization="FP8", accuracy=[]), org=org).run
    assert failed(run) == ["accuracy_for_quantization"]


def test_an_accuracy_run_landing_later_on_the_deployment_clears_the_rule(org):
    load = run_ingest(document=document(quantization="FP8", accuracy=[]), org=org).run
    accuracy_only = document(quantization="FP8", accuracy=[{**GSM, "n": 1319, "score": 0.95}])
    accuracy_only["points"] = []
    run_ingest(document=accuracy_only, org=org)
    load.refresh_from_db()
    assert load.rules_passed, load.rules_failed


def test_a_quantized_score_clearly_below_the_reference_precision_fails(org):
    run_ingest(document=document(quantization="BF16", accuracy=[{**GSM, "score": 0.96}]), org=org)
    low = run_ingest(
        document=document(
            quantization="FP8", accuracy=[{**GSM, "n": 1319, "score": 0.90, "ci_high": 0.916}]
        ),
        org=org,
    ).run
    assert failed(low) == ["accuracy_for_quantization"]
    assert "99% of the reference precision's 0.960" in low.rules_failed[0]["reason"]
    # Within the margin (its interval reaches 99% of the reference): passes.
    close = run_ingest(
        document=document(
            accelerator="B200",
            quantization="FP8",
            accuracy=[{**GSM, "n": 1319, "score": 0.945, "ci_high": 0.957}],
        ),
        org=org,
    ).run
    assert close.rules_passed, close.rules_failed


def test_the_rules_are_pure_and_name_every_failure_at_once():
    point = rules.PointFigures(
        point_id=1,
        output_tok_s=10,
        unlabelled_tok_s=None,
        success_rate=0.5,
        prompt_length_mismatch_rate=0,
        client_bound=False,
    )
    data = rules.RuleInput(
        deployment={"engine": {"name": "vllm"}, "quantization": {"weights": "NVFP4"}},
        points=[point],
        best_point_id=1,
        min_success_rate=0.99,
    )
    names = [f.rule for f in rules.check(data)]
    assert names == [
        "facts_complete",
        "engine_flags_disclosed",
        "success_rate",
        "accuracy_for_quantization",
    ]
    assert set(names) <= set(rules.RULES)


def _unreported_point(**reported) -> rules.PointFigures:
    figures = {"success_rate": None, "prompt_length_mismatch_rate": None, "client_bound": None}
    return rules.PointFigures(
        point_id=1, output_tok_s=10, unlabelled_tok_s=None, **{**figures, **reported}
    )


def _checked(origin: str, point: rules.PointFigures, best: int | None = 1) -> list[str]:
    deployment = document()["deployment"]
    data = rules.RuleInput(
        deployment=deployment,
        points=[point],
        best_point_id=best,
        min_success_rate=0.99,
        origin=origin,
        accuracy=[rules.AccuracyFact("gsm8k-5shot-v1", "gsm8k", 0.95)],
    )
    return [f.rule for f in rules.check(data)]


def test_an_imported_run_is_not_failed_for_what_a_peer_tool_cannot_report():
    assert _checked("imported", _unreported_point()) == []
    assert set(rules.WAIVED_WHEN_NOT_REPORTED["imported"]) <= set(rules.RULES)


def test_measured_and_submitted_runs_keep_the_strict_rules_on_unreported_figures():
    expected = ["prompt_lengths_matched", "client_not_bound", "success_rate"]
    for origin in ("scheduled", "submitted", "published", ""):
        assert _checked(origin, _unreported_point()) == expected


def test_an_imported_run_that_reports_a_failing_figure_still_fails_it():
    assert _checked("imported", _unreported_point(success_rate=0.5)) == ["success_rate"]
    bound = _unreported_point(client_bound=True)
    assert _checked("imported", bound, best=None) == ["client_not_bound"]


def _facts_failure(origin: str, deployment: dict, image: str | None = None) -> list[str]:
    data = rules.RuleInput(
        deployment=deployment,
        points=[],
        best_point_id=None,
        min_success_rate=0.99,
        origin=origin,
        image=image,
    )
    return [f.reason for f in rules.check(data) if f.rule == "facts_complete"]


PEER_DEPLOYMENT = {
    "engine": {"name": "sglang"},
    "quantization": {"weights": "FP8"},
    "parallelism": {"tp": 8, "ep": 1},
    "engine_flags": ["--tensor-parallel-size=$TP"],
}


def test_an_imported_run_states_its_engine_release_by_its_image_tag():
    tag = "lmsysorg/sglang:v0.5.12-rocm700-mi35x"
    assert _facts_failure("imported", PEER_DEPLOYMENT, image=tag) == []
    # Without an image the release is not stated, whatever the origin.
    assert _facts_failure("imported", PEER_DEPLOYMENT) == [
        "not stated: engine.version, engine.image_digest"
    ]
    assert set(rules.IMPORTED_FACTS) <= {
        "engine.version",
        "engine.image_digest",
        "quantization.activations",
        "quantization.kv_cache",
    }


def test_only_imported_runs_are_excused_the_facts_a_peer_does_not_publish():
    tag = "lmsysorg/sglang:v0.5.12-rocm700-mi35x"
    for origin in ("scheduled", "submitted", "published", ""):
        assert _facts_failure(origin, PEER_DEPLOYMENT, image=tag) == [
            "not stated: engine.version, engine.image_digest, quantization.activations, "
            "quantization.kv_cache"
        ]


def test_a_disaggregated_deployment_states_its_parallelism_per_pool():
    split = {
        **document()["deployment"],
        "parallelism": {},
        "disaggregation": {
            "prefill_gpus": 8,
            "decode_gpus": 8,
            "prefill": {"tp": 8},
            "decode": {"tp": 8, "ep": 8},
        },
    }
    assert _facts_failure("submitted", split) == []
    split["disaggregation"]["decode"] = None
    assert _facts_failure("submitted", split) == ["not stated: parallelism"]


def test_a_published_run_that_fails_a_rule_names_it_on_its_page_and_does_not_rank(client, org):
    doc = document(accelerator="H200")
    del doc["deployment"]["engine"]["image_digest"]
    bad = run_ingest(document=doc, org=org).run
    # Self-reported: the good run ranks once a reviewer approved it (issue 53).
    good = approved(run_ingest(document=document(accelerator="B200"), org=org).run)
    html = client.get(f"/runs/{bad.pk}/").content.decode()
    assert 'id="rules-failed"' in html and 'data-rule="facts_complete"' in html
    assert "not checked" in html and "engine.image_digest" in html
    board = rows_of(client.get("/?scenario=seed-20k-1k-60&format=csv"))
    assert [int(r["run_id"]) for r in board] == [good.pk]
    page = client.get("/?scenario=seed-20k-1k-60").content.decode()
    assert "only runs that pass the board&#x27;s rules" in page
    listed = rows_of(client.get("/?scenario=seed-20k-1k-60&unchecked=1&format=csv"))
    assert {int(r["run_id"]) for r in listed} == {good.pk, bad.pk}


def test_the_board_filters_by_origin(client, org):
    submitted = run_ingest(document=document(), org=org).run
    imported_doc = document(accelerator="B200", provenance="imported")
    imported = run_ingest(document=imported_doc, org=org).run
    assert (submitted.origin, imported.origin) == ("submitted", "imported")
    only = rows_of(client.get("/?scenario=seed-20k-1k-60&origin=imported&format=csv"))
    assert [int(r["run_id"]) for r in only] == [imported.pk]
    html = client.get("/?scenario=seed-20k-1k-60&origin=imported").content.decode()
    assert "origins: imported;" in html


def test_the_check_command_stores_what_the_rules_say_now(org):
    run = run_ingest(document=document(), org=org).run
    stale = copy.deepcopy(run.document)
    stale["deployment"]["engine_flags"] = []
    type(run).objects.filter(pk=run.pk).update(document=stale)
    run.refresh_from_db()
    assert [f.rule for f in run_rules_refresh(run=run)] == ["engine_flags_disclosed"]
    run.refresh_from_db()
    assert not run.rules_passed


def test_checking_a_deployments_runs_again_costs_the_same_queries_for_three_runs_or_nine(org):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from apps.runs.models import Run
    from apps.trust.services import runs_rules_refresh

    def queries_to_refresh() -> int:
        with CaptureQueriesContext(connection) as queries:
            runs_rules_refresh(runs=Run.objects.all())
        return len(queries.captured_queries)

    for _ in range(3):
        run_ingest(document=document(quantization="FP8", accuracy=[]), org=org)
    three = queries_to_refresh()
    for _ in range(6):
        run_ingest(document=document(quantization="FP8", accuracy=[]), org=org)
    assert queries_to_refresh() == three
    assert not Run.objects.filter(rules_passed=True).exists()
    # An accuracy result changes what every one of the nine reads: each is written.
    accuracy_only = document(quantization="FP8", accuracy=[{**GSM, "n": 1319, "score": 0.95}])
    accuracy_only["points"] = []
    run_ingest(document=accuracy_only, org=org)
    assert Run.objects.filter(rules_passed=True, points__isnull=False).distinct().count() == 9


def test_a_run_that_stopped_early_is_kept_partial_named_and_off_the_default_board(client, org):
    # Every other rule passes: `run_complete` alone keeps it off the board (issue 59).
    doc = document(accelerator="H200")
    doc.update(status="partial", stopped_early="aiperf reports was_cancelled: true")
    partial = run_ingest(document=doc, org=org).run
    whole = approved(run_ingest(document=document(accelerator="B200"), org=org).run)
    assert partial.status == "partial" and failed(partial) == ["run_complete"]
    assert partial.rules_failed[0]["reason"] == "stopped early: aiperf reports was_cancelled: true"
    html = client.get(f"/runs/{partial.pk}/").content.decode()
    assert "stopped early: aiperf reports was_cancelled: true" in html
    assert 'data-rule="run_complete"' in html
    board = rows_of(client.get("/?scenario=seed-20k-1k-60&format=csv"))
    assert [int(r["run_id"]) for r in board] == [whole.pk]
    listed = rows_of(client.get("/?scenario=seed-20k-1k-60&unchecked=1&format=csv"))
    assert {int(r["run_id"]) for r in listed} == {whole.pk, partial.pk}


def test_a_document_that_stopped_early_cannot_say_it_succeeded(org):
    from workers.results import DocumentError, parse_document

    doc = document()
    doc["stopped_early"] = "cancelled by the user"
    with pytest.raises(DocumentError, match="stopped early is partial"):
        parse_document(doc)
