"""Runs of one configuration over days, stored through the one ingestion path."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from apps.runs.models import Run
from tests.factories import document, point
from tests.reviews import ingest_reviewed

START = datetime(2026, 3, 1, tzinfo=UTC)
# Run-to-run wobble of about 0.5%, so the series has noise of its own.
WOBBLE = (1.000, 1.004, 0.996, 1.003, 0.997, 1.002, 0.998, 1.005, 0.995, 1.001, 0.999, 1.0)


def stored_run(
    day: int,
    output_tok_s: float,
    *,
    org=None,
    is_public: bool = True,
    engine_version: str = "0.5.23",
    accelerator: str = "MI355X",
    model: str = "GLM 5.2",
    provenance: str = "measured",
    client_bound: bool = False,
    failed: int = 0,
) -> Run:
    pt: dict[str, Any] = point(
        16, output_tok_s=output_tok_s, ttft_p99_ms=1500, interactivity=100, failed=failed
    )
    if client_bound:
        pt["client_bound"] = True
    doc = document(
        points=[pt],
        engine_version=engine_version,
        accelerator=accelerator,
        model=model,
        provenance=provenance,
    )
    doc["environment"] = {"started_at": (START + timedelta(days=day)).isoformat()}
    return ingest_reviewed(document=doc, org=org, is_public=is_public).run


def stored_series(levels: list[float], *, first_day: int = 0, **kwargs: Any) -> list[Run]:
    """One run a day at each level (throughput, tok/s), with WOBBLE on it."""
    return [
        stored_run(first_day + i, level * WOBBLE[i % len(WOBBLE)], **kwargs)
        for i, level in enumerate(levels)
    ]
