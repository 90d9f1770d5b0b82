import pytest

from apps.runs.services import run_ingest
from tests.factories import document

pytestmark = pytest.mark.django_db


def test_imported_percentiles_say_which_tool_computed_them(org):
    doc = document(provenance="imported")
    doc["source"] = {"tool": "vllm bench serve 0.11.0"}
    run = run_ingest(document=doc, org=org).run
    point = run.points.first()
    assert point.latency_ms["ttft"]["method"] == "reported by vllm bench serve 0.11.0"
    assert point.interactivity["method"] == "reported by vllm bench serve 0.11.0"


def test_a_stated_method_is_kept_and_measured_ones_are_linear(org):
    doc = document()
    doc["points"][0]["latency_ms"]["ttft"]["method"] = "nearest rank"
    run = run_ingest(document=doc, org=org).run
    first, second = run.points.all()[:2]
    assert first.latency_ms["ttft"]["method"] == "nearest rank"
    assert second.latency_ms["ttft"]["method"] == "linear"
    assert run.document["points"][1]["latency_ms"]["ttft"]["method"] == "linear"
