"""`manage.py importresults`: real fixture files into the real database."""

from __future__ import annotations

import hashlib
import json

import pytest
from django.core.management import CommandError, call_command

from apps.accounts.services import organization_get_or_create
from apps.accuracy.models import AccuracyResult
from apps.imports.management.commands.importresults import Command
from apps.runs.models import Point, RequestRecord, Run
from tests.apps.imports.files import FIXTURES

pytestmark = pytest.mark.django_db

SUMMARY = FIXTURES / "inferencex" / "glm5_fp8_vllm_tp8_isl16384_osl128_conc16.json"


def importresults(*args: str) -> str:
    # The command object is passed directly so the tests run whether or not the project
    # has added apps.imports to INSTALLED_APPS yet.
    from io import StringIO

    out = StringIO()
    call_command(Command(), *args, stdout=out)
    return out.getvalue()


@pytest.mark.sqlite_smoke
def test_it_stores_the_summary_in_milliseconds_exactly(facts_file):
    raw = json.loads(SUMMARY.read_text())
    importresults(str(SUMMARY), "--deployment", str(facts_file))
    run = Run.objects.get()
    point = Point.objects.get(run=run)
    assert run.provenance == "imported"
    assert run.file_sha256 == hashlib.sha256(SUMMARY.read_bytes()).hexdigest()
    assert run.file_name == SUMMARY.name
    assert point.ttft_p50_ms == raw["median_ttft"] * 1000
    assert point.ttft_p99_ms == raw["p99_ttft"] * 1000
    assert point.e2el_p99_ms == raw["p99_e2el"] * 1000
    assert point.tpot_p50_ms == raw["median_tpot"] * 1000
    assert point.output_tok_s == raw["output_throughput"]
    assert point.input_tok_s == raw["input_throughput"]
    assert point.concurrency == raw["max_concurrency"]
    assert point.window_s == raw["duration"]
    assert run.deployment.accelerator.sku == "H200"


def test_importing_the_same_file_twice_stores_it_once(facts_file):
    importresults(str(SUMMARY), "--deployment", str(facts_file))
    again = importresults(str(SUMMARY), "--deployment", str(facts_file))
    assert f"already imported as run {Run.objects.get().pk} " in again
    assert Run.objects.count() == 1
    assert Point.objects.count() == 1


def test_a_truncated_file_is_a_clear_error_and_stores_nothing(tmp_path, facts_file):
    broken = tmp_path / SUMMARY.name
    broken.write_bytes(SUMMARY.read_bytes()[:300])
    with pytest.raises(CommandError, match="truncated"):
        importresults(str(broken), "--deployment", str(facts_file))
    assert (Run.objects.count(), Point.objects.count()) == (0, 0)


def test_missing_facts_name_themselves_and_store_nothing():
    with pytest.raises(CommandError, match="deployment.accelerator"):
        importresults(str(SUMMARY))
    assert Run.objects.count() == 0


def test_an_unrecognised_file_says_what_it_saw(tmp_path):
    odd = tmp_path / "odd.json"
    odd.write_text('{"hello": 1}')
    with pytest.raises(CommandError, match="cannot tell the format.*hello"):
        importresults(str(odd))


def test_all_eval_records_are_stored_or_none(tmp_path):
    evals = FIXTURES / "inferencex" / "supplemental-evals.json"
    rows = json.loads(evals.read_text())
    rows[40]["em_strict"] = 1.7  # not a rate: the whole file must be refused
    bad = tmp_path / "supplemental-evals.json"
    bad.write_text(json.dumps(rows))
    with pytest.raises(CommandError, match="record 40"):
        importresults(str(bad), "--gpus", "tp")
    assert Run.objects.count() == 0

    importresults(str(evals), "--gpus", "tp")
    assert Run.objects.count() == 66
    first = json.loads(evals.read_text())[0]
    stored = AccuracyResult.objects.filter(metric="em_strict").order_by("run__id").first()
    assert stored.score == first["em_strict"]
    assert stored.stderr == first["em_strict_se"]


def test_aiperf_records_land_as_request_records(tmp_path):
    folder = FIXTURES / "aiperf-0.13.0"
    summary = folder / "llama-server_completions_c4_profile_export_aiperf.json"
    records = folder / "llama-server_completions_c4_profile_export.jsonl"
    importresults(
        str(summary), "--records", str(records), "--model", "random-weights-llama",
        "--accelerator", "CPU", "--gpus", "1", "--engine", "llama.cpp", "--weights", "F16",
    )  # fmt: skip
    point = Point.objects.get()
    assert RequestRecord.objects.filter(point=point).count() == 20
    raw = json.loads(summary.read_text())
    assert point.ttft_p99_ms == raw["time_to_first_token"]["p99"]
    assert point.cached_tokens == raw["total_usage_prompt_cache_read_tokens"]["avg"]


def test_private_imports_belong_to_an_organization(facts_file):
    with pytest.raises(CommandError, match="--private needs --org"):
        importresults(str(SUMMARY), "--deployment", str(facts_file), "--private")
    importresults(str(SUMMARY), "--deployment", str(facts_file), "--org", "acme", "--private")
    run = Run.objects.get()
    assert run.is_public is False
    assert run.org == organization_get_or_create(slug="acme")


def test_each_organization_imports_the_same_file_into_its_own_run(facts_file):
    importresults(str(SUMMARY), "--deployment", str(facts_file), "--org", "acme")
    importresults(str(SUMMARY), "--deployment", str(facts_file), "--org", "rival")
    assert sorted(Run.objects.values_list("org__slug", flat=True)) == ["acme", "rival"]


def test_a_file_imported_without_an_org_does_not_block_an_organization(facts_file):
    importresults(str(SUMMARY), "--deployment", str(facts_file))
    out = importresults(str(SUMMARY), "--deployment", str(facts_file), "--org", "acme")
    assert "stored: run" in out
    assert Run.objects.filter(org__slug="acme").count() == 1
    assert Run.objects.filter(org=None).count() == 1
    again = importresults(str(SUMMARY), "--deployment", str(facts_file), "--org", "acme")
    assert f"already imported as run {Run.objects.get(org__slug='acme').pk} " in again


def test_an_exported_run_document_round_trips_into_a_fresh_database(facts_file, tmp_path):
    importresults(str(SUMMARY), "--deployment", str(facts_file))
    run = Run.objects.get()
    before = Point.objects.get(run=run)
    exported = tmp_path / "run.json"
    exported.write_text(json.dumps(run.document))
    Run.objects.all().delete()  # a fresh database, as far as runs go

    importresults(str(exported))
    after = Point.objects.get()
    fields = ("ttft_p50_ms", "ttft_p99_ms", "tpot_p50_ms", "e2el_p99_ms", "output_tok_s",
              "input_tok_s", "requests_per_s", "window_s", "concurrency")  # fmt: skip
    assert {f: getattr(after, f) for f in fields} == {f: getattr(before, f) for f in fields}
    assert after.run.provenance == "imported"


def test_an_aiperf_run_imported_without_then_with_its_records_is_one_run():
    folder = FIXTURES / "aiperf-0.13.0"
    summary = folder / "llama-server_completions_c4_profile_export_aiperf.json"
    records = folder / "llama-server_completions_c4_profile_export.jsonl"
    facts = ("--model", "random-weights-llama", "--accelerator", "CPU", "--gpus", "1",
             "--engine", "llama.cpp", "--weights", "F16")  # fmt: skip
    importresults(str(summary), *facts)
    assert RequestRecord.objects.count() == 0
    out = importresults(str(summary), "--records", str(records), *facts)
    run = Run.objects.get()
    assert f"already imported as run {run.pk} " in out
    assert "20 per-request record(s) added" in out
    assert RequestRecord.objects.filter(point__run=run).count() == 20
    importresults(str(summary), "--records", str(records), *facts)
    assert (Run.objects.count(), RequestRecord.objects.count()) == (1, 20)


def test_a_file_an_organization_imported_under_the_old_key_is_not_stored_twice(facts_file):
    importresults(str(SUMMARY), "--deployment", str(facts_file), "--org", "acme")
    run = Run.objects.get()
    # As stored before keys carried the organization: the file's hash alone.
    Run.objects.filter(pk=run.pk).update(
        idempotency_key=run.idempotency_key.removesuffix(f":org-{run.org_id}")
    )
    again = importresults(str(SUMMARY), "--deployment", str(facts_file), "--org", "acme")
    assert f"already imported as run {run.pk} " in again
    assert Run.objects.count() == 1


def test_a_file_nested_past_the_stack_is_a_clear_error_not_a_traceback(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_bytes(b"[" * 100_000 + b"]" * 100_000)
    with pytest.raises(CommandError, match="deep.json: the file nests JSON too deeply"):
        importresults(str(deep))
    assert Run.objects.count() == 0
