"""Reads for the board's trust: public dumps and the review queue."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from apps.runs.models import Point, Run
from apps.trust.models import Review

# The points dump's columns, in order (documented in docs/data-dumps.md).
POINT_COLUMNS = (
    "run_id",
    "origin",
    "provenance",
    "rules_passed",
    "model",
    "accelerator",
    "gpus",
    "engine",
    "engine_version",
    "quantization",
    "deployment_fingerprint",
    "scenario",
    "ordinal",
    "concurrency",
    "request_rate",
    "success_rate",
    "output_tok_s",
    "total_tok_s",
    "ttft_p50_ms",
    "ttft_p99_ms",
    "tpot_p50_ms",
    "e2el_p99_ms",
    "run_created_at",
)
_POINT_SOURCES = {
    "run_id": "run_id",
    "origin": "run__origin",
    "provenance": "run__provenance",
    "rules_passed": "run__rules_passed",
    "model": "run__deployment__model__name",
    "accelerator": "run__deployment__accelerator__sku",
    "gpus": "run__deployment__gpus",
    "engine": "run__deployment__engine__name",
    "engine_version": "run__deployment__engine_version",
    "quantization": "run__deployment__quant_weights",
    "deployment_fingerprint": "run__deployment__fingerprint",
    "scenario": "run__scenario__slug",
    "ordinal": "ordinal",
    "concurrency": "concurrency",
    "request_rate": "request_rate",
    "success_rate": "success_rate",
    "output_tok_s": "output_tok_s",
    "total_tok_s": "total_tok_s",
    "ttft_p50_ms": "ttft_p50_ms",
    "ttft_p99_ms": "ttft_p99_ms",
    "tpot_p50_ms": "tpot_p50_ms",
    "e2el_p99_ms": "e2el_p99_ms",
    "run_created_at": "run__created_at",
}


def public_documents() -> Iterator[dict[str, Any]]:
    """Public runs only, whoever asks: a dump is the same file for everyone."""
    runs = Run.objects.filter(is_public=True).order_by("id")
    for run_id, origin, document in runs.values_list("id", "origin", "document").iterator(
        chunk_size=200
    ):
        yield {"run_id": run_id, "origin": origin, **document}


def public_points() -> Iterator[dict[str, Any]]:
    points = Point.objects.filter(run__is_public=True).order_by("run_id", "ordinal")
    for row in points.values(*_POINT_SOURCES.values()).iterator(chunk_size=2000):
        yield {column: row[source] for column, source in _POINT_SOURCES.items()}


def review_queue() -> list[Review]:
    return list(
        Review.objects.filter(status=Review.Status.PROPOSED).select_related(
            "run__deployment__model", "run__deployment__accelerator", "run__org"
        )
    )
