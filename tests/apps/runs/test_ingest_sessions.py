"""Schema revision 2 (multi-turn sessions) ingests beside revision-1 documents."""

import pytest

from apps.runs.services import run_ingest
from workers.loadgen.session_shapes import SESSION_PRESETS, mean_context_tokens
from workers.results import SCHEMA_REVISION, DocumentError


def _sessions_document(document: dict) -> dict:
    shape = SESSION_PRESETS["agentic-coding"]
    document["schema_revision"] = SCHEMA_REVISION
    document["scenario"] = {
        "preset": "agentic-coding",
        "input_tokens": mean_context_tokens(shape),
        "output_tokens": shape.output_tokens,
        "sessions": {**shape.model_dump(), "sessions": 2},
    }
    point = document["points"][0]
    point["turns"] = [
        {"turn": 0, "requests": 2, "succeeded": 2, "context_tokens_mean": 3080.0},
        {"turn": 1, "requests": 2, "succeeded": 2, "prefix_cache_hit_rate": 0.8},
    ]
    point["sessions"] = {"total": 2, "completed": 2}
    for k, record in enumerate(point["records"]):
        record.update(session=k, turn=0)
    return document


def test_a_sessions_document_is_stored_under_its_preset_with_its_turns(document, org):
    run = run_ingest(document=_sessions_document(document), org=org).run
    assert run.scenario.slug == "agentic-coding"
    stored = run.document["points"][0]
    assert stored["turns"][1]["prefix_cache_hit_rate"] == 0.8
    assert stored["sessions"] == {"total": 2, "completed": 2}
    assert run.document["scenario"]["sessions"]["turns"] == 12


def test_a_revision_the_server_does_not_know_is_refused_by_name(document, org):
    document["schema_revision"] = SCHEMA_REVISION + 1
    with pytest.raises(DocumentError) as refused:
        run_ingest(document=document, org=org)
    assert "schema_revision" in str(refused.value.errors)


def test_the_run_page_shows_turns_the_servers_series_and_a_queueing_flag(document, org, client):
    document = _sessions_document(document)
    point = document["points"][0]
    point["turns"][0]["ttft_ms"] = {"p50": 123.4}
    point["server"] = {
        "engine": "vllm",
        "interval_s": 1.0,
        "queued_max": 3,
        "series": [
            {
                "name": "generation_tokens",
                "source": "vllm:generation_tokens_total",
                "kind": "counter",
                "t_ms": [-5.0, 900.0, 1805.0],
                "values": [100.0, 400.0, 1100.0],
            }
        ],
    }
    point["speculative_acceptance"] = {
        "draft_tokens": 300,
        "accepted_tokens": 200,
        "rate": 0.6667,
        "source": "server_metrics",
    }
    run = run_ingest(document=document, org=org).run
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert "123.4" in page and "80.0%" in page  # turn 0 TTFT, turn 1 cache hit
    assert "vllm:generation_tokens_total" in page and ">1000<" in page  # the counter's rise
    assert "server queued up to 3 requests" in page
    assert "200 of 300 draft tokens accepted" in page
