"""Reads for the board's trust: public dumps and the review queue."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from apps.runs.models import Point, Run
from apps.trust.models import Review
from workers import figures

# The points dump's columns, in order (documented in docs/data-dumps.md), each with the
# value it is read from; the figures' columns are the registry's (workers/figures.py).
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
    **{f.column: f.column for f in map(figures.figure, figures.DUMPED)},
    "run_created_at": "run__created_at",
}
POINT_COLUMNS = tuple(_POINT_SOURCES)


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
