import copy
import json
from pathlib import Path

import pytest

from workers.results import DocumentError, json_schema, parse_document

SCHEMA_FILE = Path(__file__).parents[2] / "workers" / "schema" / "inferboard.run.v1.json"


def errors_of(data) -> list[tuple[str, str]]:
    with pytest.raises(DocumentError) as caught:
        parse_document(data)
    return caught.value.errors


def test_the_example_document_is_valid(document):
    parsed = parse_document(document)
    assert parsed.points[0].records[1].ttft_ms == 490
    assert parsed.deployment.parallelism.label() == "TP4×DP2"


def test_an_error_names_the_json_path_of_a_negative_percentile(document):
    document["points"][1]["latency_ms"]["ttft"]["p99"] = -1
    assert ("points[1].latency_ms.ttft.p99", "must be >= 0") in errors_of(document)


def test_an_unknown_field_is_an_error_not_silently_dropped(document):
    document["points"][0]["throughput"]["output_tok_per_s"] = 5
    assert ("points[0].throughput.output_tok_per_s", "unknown field") in errors_of(document)


def test_percentiles_must_not_fall(document):
    document["points"][0]["latency_ms"]["ttft"]["p99"] = 100
    [(path, message)] = errors_of(document)
    assert path == "points[0].latency_ms.ttft"
    assert "p99" in message and "p95" in message


def test_request_counts_must_add_up(document):
    document["points"][1]["requests"]["failed"] = 0
    assert errors_of(document) == [("points[1].requests", "succeeded + failed must equal total")]


def test_a_run_without_points_or_accuracy_is_rejected(document):
    document["points"], document["accuracy"] = [], []
    [(path, message)] = errors_of(document)
    assert path == "(document)" and "at least one point" in message


def test_missing_fields_are_named(document):
    del document["deployment"]["gpus"]
    assert ("deployment.gpus", "required") in errors_of(document)


def test_the_fingerprint_ignores_notes_but_not_served_facts(document):
    base = parse_document(document).deployment_fingerprint()
    noted = copy.deepcopy(document)
    noted["deployment"]["notes"] = "ran on a Tuesday"
    assert parse_document(noted).deployment_fingerprint() == base
    fp8 = copy.deepcopy(document)
    fp8["deployment"]["quantization"]["weights"] = "FP8"
    assert parse_document(fp8).deployment_fingerprint() != base


def test_the_exported_json_schema_is_current():
    # Regenerate with: python -m workers.results > workers/schema/inferboard.run.v1.json
    assert json.loads(SCHEMA_FILE.read_text()) == json.loads(json.dumps(json_schema()))


def test_workers_never_import_django():
    import subprocess
    import sys

    code = "import sys, workers.results; print('django' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
